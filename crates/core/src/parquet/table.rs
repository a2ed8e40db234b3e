//! A small columnar table: what the digest writes as one Parquet file and what [`super::read`]
//! gives back. One `Vec` per column (strings as one buffer plus offsets), so a table of a
//! hundred thousand timeline rows is a handful of allocations, not one per row.

/// A column's values, dense: a null row holds the type's default (see [`Column::valid`]).
#[derive(Debug, Clone, PartialEq)]
pub enum Values {
    Bool(Vec<bool>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    Str(Strings),
}

impl Values {
    pub fn len(&self) -> usize {
        match self {
            Values::Bool(v) => v.len(),
            Values::I32(v) => v.len(),
            Values::I64(v) => v.len(),
            Values::F64(v) => v.len(),
            Values::Str(v) => v.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The Parquet physical type's name, as the digest header's schema lists it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Values::Bool(_) => "boolean",
            Values::I32(_) => "int32",
            Values::I64(_) => "int64",
            Values::F64(_) => "double",
            Values::Str(_) => "string",
        }
    }
}

/// UTF-8 strings in one buffer: value `i` is `data[offsets[i]..offsets[i + 1]]`.
#[derive(Debug, Clone, PartialEq)]
pub struct Strings {
    pub offsets: Vec<u32>,
    pub data: String,
}

impl Default for Strings {
    fn default() -> Self {
        Strings {
            offsets: vec![0],
            data: String::new(),
        }
    }
}

impl Strings {
    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn push(&mut self, s: &str) {
        self.data.push_str(s);
        self.offsets.push(self.data.len() as u32);
    }

    /// Value `i`; "" past the end (callers check lengths once, per table).
    pub fn get(&self, i: usize) -> &str {
        let (Some(&a), Some(&b)) = (self.offsets.get(i), self.offsets.get(i + 1)) else {
            return "";
        };
        self.data.get(a as usize..b as usize).unwrap_or("")
    }

    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        (0..self.len()).map(|i| self.get(i))
    }
}

impl<'a> FromIterator<&'a str> for Strings {
    fn from_iter<I: IntoIterator<Item = &'a str>>(it: I) -> Self {
        let mut s = Strings::default();
        for x in it {
            s.push(x);
        }
        s
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Column {
    pub name: String,
    pub values: Values,
    /// `Some` for a nullable (Parquet OPTIONAL) column: `false` where the row is null.
    pub valid: Option<Vec<bool>>,
}

impl Column {
    pub fn new(name: &str, values: Values) -> Self {
        Column {
            name: name.to_owned(),
            values,
            valid: None,
        }
    }

    /// A nullable column from optional values (null rows hold the default).
    pub fn nullable_str<'a>(name: &str, v: impl Iterator<Item = Option<&'a str>>) -> Self {
        let mut s = Strings::default();
        let mut valid = Vec::new();
        for x in v {
            s.push(x.unwrap_or(""));
            valid.push(x.is_some());
        }
        Column {
            name: name.to_owned(),
            values: Values::Str(s),
            valid: Some(valid),
        }
    }

    pub fn nullable_i64(name: &str, v: impl Iterator<Item = Option<i64>>) -> Self {
        let (vals, valid): (Vec<i64>, Vec<bool>) = v.map(|x| (x.unwrap_or(0), x.is_some())).unzip();
        Column {
            name: name.to_owned(),
            values: Values::I64(vals),
            valid: Some(valid),
        }
    }

    pub fn is_valid(&self, i: usize) -> bool {
        self.valid.as_ref().is_none_or(|v| v.get(i) == Some(&true))
    }
}

/// Columns of equal length.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Table {
    pub rows: usize,
    pub columns: Vec<Column>,
}

impl Table {
    /// A table from columns; `Err` names the first column whose length differs.
    pub fn new(columns: Vec<Column>) -> Result<Table, String> {
        let rows = columns.first().map_or(0, |c| c.values.len());
        if let Some(c) = columns
            .iter()
            .find(|c| c.values.len() != rows || c.valid.as_ref().is_some_and(|v| v.len() != rows))
        {
            return Err(format!("column {} has a different length", c.name));
        }
        Ok(Table { rows, columns })
    }

    pub fn column(&self, name: &str) -> Result<&Column, String> {
        self.columns
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no column {name}"))
    }

    fn typed<'a, T>(
        &'a self,
        name: &str,
        want: &str,
        f: impl Fn(&'a Values) -> Option<T>,
    ) -> Result<T, String> {
        let c = self.column(name)?;
        f(&c.values)
            .ok_or_else(|| format!("column {name} is {}, expected {want}", c.values.type_name()))
    }

    pub fn i64s(&self, name: &str) -> Result<&[i64], String> {
        self.typed(name, "int64", |v| match v {
            Values::I64(x) => Some(x.as_slice()),
            _ => None,
        })
    }

    pub fn i32s(&self, name: &str) -> Result<&[i32], String> {
        self.typed(name, "int32", |v| match v {
            Values::I32(x) => Some(x.as_slice()),
            _ => None,
        })
    }

    pub fn f64s(&self, name: &str) -> Result<&[f64], String> {
        self.typed(name, "double", |v| match v {
            Values::F64(x) => Some(x.as_slice()),
            _ => None,
        })
    }

    pub fn bools(&self, name: &str) -> Result<&[bool], String> {
        self.typed(name, "boolean", |v| match v {
            Values::Bool(x) => Some(x.as_slice()),
            _ => None,
        })
    }

    pub fn strs(&self, name: &str) -> Result<&Strings, String> {
        self.typed(name, "string", |v| match v {
            Values::Str(x) => Some(x),
            _ => None,
        })
    }

    /// A nullable string column's row `i` (`None` when null).
    pub fn opt_str(&self, name: &str) -> Result<impl Fn(usize) -> Option<String> + '_, String> {
        let c = self.column(name)?;
        let s = self.strs(name)?;
        Ok(move |i| c.is_valid(i).then(|| s.get(i).to_owned()))
    }

    pub fn opt_i64(&self, name: &str) -> Result<impl Fn(usize) -> Option<i64> + '_, String> {
        let c = self.column(name)?;
        let v = self.i64s(name)?;
        Ok(move |i| c.is_valid(i).then(|| v.get(i).copied()).flatten())
    }
}
