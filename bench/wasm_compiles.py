"""V8's top-tier compiles of the page's wasm around a load, by function name (BENCHMARKS.md):
    python3 bench/wasm_compiles.py 'dist-prof/*_bg.wasm' LOG [TOP]
LOG is tests/e2e/bench_compiles.mjs's output; the module must carry a name section (bench/prof_dist.sh).
Prints the compiles between `=== PICK` and `=== DONE` (count, ms, the TOP functions) and those before."""
import sys
def leb(b,i):
    r=0;s=0
    while True:
        x=b[i];i+=1;r|=(x&0x7f)<<s;s+=7
        if x<0x80: return r,i
def names(path):
    b=open(path,'rb').read(); i=8; out={}
    while i<len(b):
        sid=b[i]; i+=1; size,i=leb(b,i); end=i+size
        if sid==0:
            nl,j=leb(b,i); nm=b[j:j+nl].decode(); j+=nl
            if nm=='name':
                while j<end:
                    sub=b[j]; j+=1; sz,j=leb(b,j); se=j+sz
                    if sub==1:
                        n,k=leb(b,j)
                        for _ in range(n):
                            idx,k=leb(b,k); l,k=leb(b,k); out[idx]=b[k:k+l].decode('utf8','replace'); k+=l
                    j=se
        i=end
    return out
if __name__=='__main__':
    import re,collections,glob
    nm=names(glob.glob(sys.argv[1])[0])
    lines=open(sys.argv[2]).read().split('\n')
    after=False; c=collections.Counter(); cnt=0; tot=0
    for l in lines:
        if '=== PICK' in l: after=True
        if '=== DONE' in l: after=False
        m=re.search(r'#(\d+) using TurboFan, took (\d+) μs',l)
        if m and after:
            f=int(m.group(1)); us=int(m.group(2)); c[nm.get(f,str(f))]+=us; cnt+=1; tot+=us
    print('after pick: %d TurboFan compiles, %.0f ms'%(cnt,tot/1000))
    before=[int(x) for x in re.findall(r'using TurboFan, took (\d+)', open(sys.argv[2]).read().split('=== PICK')[0])]
    print('before pick: %d TurboFan compiles, %.0f ms'%(len(before),sum(before)/1000))
    for f,us in c.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 40): print('%7.1f ms %s'%(us/1000,f[:150]))
