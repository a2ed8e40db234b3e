//! A deterministic generator of Kineto traces shaped like a real single-GPU training step loop.
//!
//! Per step: a DataLoader fetch, a forward pass of `layers` transformer blocks (linear/addmm GEMMs,
//! layer norm, flash attention, GELU) launched through `cudaLaunchKernel` with `ac2g` flows and
//! `correlation` ids, a backward pass on the autograd thread, an NCCL all-reduce on its own stream, an
//! optimizer step (multi_tensor_apply), a `.item()` sync (DtoH memcpy + `cudaStreamSynchronize`), and
//! `[memory]` events for activations. Output is formatted the way libkineto writes it, so parse speed
//! measured on it carries over to real files.

pub mod snapshot;

use std::io::{self, Write};

pub struct Config {
    pub steps: u32,
    /// Keep adding steps until this many bytes are written (overrides `steps`).
    pub target_bytes: Option<u64>,
    pub seed: u64,
    pub layers: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            steps: 6,
            target_bytes: None,
            seed: 1,
            layers: 4,
        }
    }
}

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        // splitmix64
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [lo, hi) nanoseconds.
    fn ns(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.next() % (hi - lo).max(1)
    }
}

const PID: u32 = 2357;
const MAIN_TID: u32 = 2357;
const BWD_TID: u32 = 2401;
const GPU_PID: u32 = 0;
const COMPUTE_STREAM: u32 = 7;
const COMM_STREAM: u32 = 20;
const BASE_US: u64 = 1_700_000_000_000_000;

/// Counting writer so callers can stop at a byte target.
struct Counted<'a, W: Write> {
    w: &'a mut W,
    n: u64,
}
impl<W: Write> Write for Counted<'_, W> {
    fn write(&mut self, b: &[u8]) -> io::Result<usize> {
        let k = self.w.write(b)?;
        self.n += k as u64;
        Ok(k)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.w.flush()
    }
}

struct Gen<'a, W: Write> {
    out: Counted<'a, W>,
    rng: Rng,
    /// Host clock and per-stream device clocks, ns since BASE_US.
    cpu: u64,
    bwd: u64,
    gpu: u64,
    comm: u64,
    corr: u64,
    ext: u64,
    events: u64,
    addr: u64,
    allocated: i64,
}

fn us(ns: u64) -> String {
    format!("{}.{:03}", BASE_US + ns / 1000, ns % 1000)
}

impl<W: Write> Gen<'_, W> {
    fn sep(&mut self) -> io::Result<()> {
        if self.events > 0 {
            self.out.write_all(b",\n")?;
        }
        self.events += 1;
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn x(
        &mut self,
        cat: &str,
        name: &str,
        pid: u32,
        tid: u32,
        ts: u64,
        dur: u64,
        args: &str,
    ) -> io::Result<()> {
        self.sep()?;
        write!(
            self.out,
            "  {{\n    \"ph\": \"X\", \"cat\": \"{cat}\", \"name\": \"{name}\", \"pid\": {pid}, \"tid\": {tid},\n    \"ts\": {}, \"dur\": {}.{:03},\n    \"args\": {{\n      {args}\n    }}\n  }}",
            us(ts),
            dur / 1000,
            dur % 1000
        )
    }

    fn flow(&mut self, ph: char, id: u64, pid: u32, tid: u32, ts: u64) -> io::Result<()> {
        self.sep()?;
        let bp = if ph == 'f' { ", \"bp\": \"e\"" } else { "" };
        write!(
            self.out,
            "  {{\n    \"ph\": \"{ph}\", \"id\": {id}, \"pid\": {pid}, \"tid\": {tid}, \"ts\": {},\n    \"cat\": \"ac2g\", \"name\": \"ac2g\"{bp}\n  }}",
            us(ts)
        )
    }

    fn memory(&mut self, ts: u64, tid: u32, bytes: i64) -> io::Result<()> {
        self.allocated += bytes;
        if bytes > 0 {
            self.addr += bytes as u64 + 512;
        }
        self.sep()?;
        let reserved = ((self.allocated.max(0) as u64 >> 21) + 1) << 21;
        write!(
            self.out,
            "  {{\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": {PID}, \"tid\": {tid},\n    \"ts\": {},\n    \"args\": {{\n      \"Total Reserved\": {reserved}, \"Total Allocated\": {}, \"Bytes\": {bytes}, \"Addr\": {}, \"Device Id\": 0, \"Device Type\": 1\n    }}\n  }}",
            us(ts),
            self.allocated,
            139_800_000_000u64 + self.addr
        )
    }

    /// An op on `tid` that launches one kernel; returns the op's end on the host.
    #[allow(clippy::too_many_arguments)]
    fn op_with_kernel(
        &mut self,
        tid: u32,
        op: &str,
        dims: &str,
        kernel: &str,
        k_lo: u64,
        k_hi: u64,
        stream: u32,
        grid: [u32; 3],
    ) -> io::Result<()> {
        let t0 = if tid == MAIN_TID { self.cpu } else { self.bwd };
        let launch_at = t0 + self.rng.ns(2_000, 6_000);
        let launch_dur = self.rng.ns(3_000, 9_000);
        let op_end = launch_at + launch_dur + self.rng.ns(1_000, 3_000);
        self.ext += 1;
        self.corr += 1;
        let (ext, corr) = (self.ext, self.corr);
        self.x("cpu_op", op, PID, tid, t0, op_end - t0, &format!("\"External id\": {ext},\"Record function id\": 0, \"Sequence number\": {ext}, \"Fwd thread id\": 0, \"Input Dims\": {dims}, \"Input type\": [\"c10::BFloat16\", \"c10::BFloat16\", \"\"], \"Ev Idx\": {ext}"))?;
        self.x(
            "cuda_runtime",
            "cudaLaunchKernel",
            PID,
            tid,
            launch_at,
            launch_dur,
            &format!("\"External id\": {ext}, \"cbid\": 211, \"correlation\": {corr}"),
        )?;
        self.flow('s', corr, PID, tid, launch_at)?;
        let clock = if stream == COMM_STREAM {
            &mut self.comm
        } else {
            &mut self.gpu
        };
        let k_start = (*clock).max(launch_at + self.rng.ns(4_000, 12_000));
        let k_dur = self.rng.ns(k_lo, k_hi);
        *clock = k_start + k_dur + self.rng.ns(500, 2_500);
        self.x(
            "kernel",
            kernel,
            GPU_PID,
            stream,
            k_start,
            k_dur,
            &format!("\"queued\": 0, \"device\": 0, \"context\": 1, \"stream\": {stream}, \"correlation\": {corr}, \"registers per thread\": 168, \"shared memory\": 98304, \"blocks per SM\": 0.5, \"warps per SM\": 4, \"grid\": [{}, {}, {}], \"block\": [384, 1, 1], \"est. achieved occupancy %\": 12, \"External id\": {ext}", grid[0], grid[1], grid[2]),
        )?;
        self.flow('f', corr, GPU_PID, stream, k_start)?;
        if tid == MAIN_TID {
            self.cpu = op_end + self.rng.ns(1_000, 4_000);
        } else {
            self.bwd = op_end + self.rng.ns(1_000, 4_000);
        }
        Ok(())
    }

    fn step(&mut self, n: u32, layers: u32) -> io::Result<()> {
        let step_start = self.cpu;
        // Data loading (host only).
        let dl = self.rng.ns(300_000, 900_000);
        self.x(
            "user_annotation",
            "enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__",
            PID,
            MAIN_TID,
            self.cpu + 1_000,
            dl,
            "\"External id\": 1",
        )?;
        self.cpu += dl + 3_000;
        self.op_with_kernel(
            MAIN_TID,
            "aten::copy_",
            "[[8, 2048], [8, 2048], []]",
            "Memcpy HtoD (Pinned -> Device)",
            20_000,
            40_000,
            COMPUTE_STREAM,
            [1, 1, 1],
        )?;
        let fwd_start = self.cpu;
        for l in 0..layers {
            self.op_with_kernel(MAIN_TID, "aten::layer_norm", "[[8, 2048, 2048], [], [2048], [2048], [], []]", "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)", 30_000, 60_000, COMPUTE_STREAM, [16384, 1, 1])?;
            self.op_with_kernel(
                MAIN_TID,
                "aten::addmm",
                "[[3072], [16384, 2048], [2048, 3072], [], []]",
                "nvjet_tst_256x128_64x4_1x2_h_bz_coopA_NTN",
                400_000,
                700_000,
                COMPUTE_STREAM,
                [96, 1, 1],
            )?;
            self.op_with_kernel(MAIN_TID, "aten::_flash_attention_forward", "[[8, 16, 2048, 128], [8, 16, 2048, 128], [8, 16, 2048, 128], [], [], [], [], [], []]", "void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4, false, false, cutlass::bfloat16_t>, true, false, false, false, true, true, false>(pytorch_flash::Flash_fwd_params)", 500_000, 900_000, COMPUTE_STREAM, [16, 256, 1])?;
            let t = self.cpu;
            self.memory(t, MAIN_TID, 268_435_456 + i64::from(l) * 4096)?;
            self.op_with_kernel(MAIN_TID, "aten::gelu", "[[8, 2048, 4096], []]", "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#1}::operator()() const::{lambda(c10::BFloat16)#1}, at::detail::Array<char*, 2>)", 80_000, 120_000, COMPUTE_STREAM, [65536, 1, 1])?;
            self.op_with_kernel(MAIN_TID, "aten::mm", "[[16384, 4096], [4096, 2048]]", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 450_000, 800_000, COMPUTE_STREAM, [132, 1, 1])?;
        }
        self.op_with_kernel(MAIN_TID, "aten::nll_loss_forward", "[[16384, 50304], [16384], [], [], []]", "void at::native::(anonymous namespace)::nll_loss_forward_reduce_cuda_kernel_2d<float, float, long>(float*, float*, float const*, long const*, float const*, bool, long, long, long, long)", 20_000, 40_000, COMPUTE_STREAM, [1, 1, 1])?;
        let fwd_end = self.cpu;
        self.x(
            "user_annotation",
            "## forward ##",
            PID,
            MAIN_TID,
            fwd_start - 500,
            fwd_end - fwd_start + 500,
            "\"External id\": 2",
        )?;
        // Backward on the autograd thread, starting once the main thread calls backward().
        self.bwd = self.bwd.max(self.cpu + 5_000);
        let bwd_start = self.bwd;
        for _ in 0..layers {
            self.op_with_kernel(BWD_TID, "aten::mm", "[[16384, 2048], [2048, 4096]]", "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nt_n_tilesize128x256x64_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas", 450_000, 800_000, COMPUTE_STREAM, [132, 1, 1])?;
            self.op_with_kernel(BWD_TID, "aten::_flash_attention_backward", "[[8, 16, 2048, 128], [8, 16, 2048, 128], [8, 16, 2048, 128], [8, 16, 2048, 128]]", "void pytorch_flash::flash_bwd_dq_dk_dv_loop_seqk_parallel_kernel<Flash_bwd_kernel_traits<128, 64, 128, 8, 2, 4, 2, false, false, cutlass::bfloat16_t>, true, false, false, false, false, true, false>(pytorch_flash::Flash_bwd_params)", 900_000, 1_500_000, COMPUTE_STREAM, [32, 8, 32])?;
            self.op_with_kernel(BWD_TID, "aten::native_layer_norm_backward", "[[8, 2048, 2048], [8, 2048, 2048], [], [], [], [2048], [2048], []]", "void at::native::(anonymous namespace)::layer_norm_grad_input_kernel<c10::BFloat16, float>(c10::BFloat16 const*, c10::BFloat16 const*, float const*, float const*, c10::BFloat16 const*, c10::BFloat16*, int)", 60_000, 100_000, COMPUTE_STREAM, [16384, 1, 1])?;
            let t = self.bwd;
            self.memory(t, BWD_TID, -(268_435_456))?;
        }
        self.op_with_kernel(
            BWD_TID,
            "nccl:all_reduce",
            "[[134217728]]",
            "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
            1_500_000,
            3_000_000,
            COMM_STREAM,
            [32, 1, 1],
        )?;
        let bwd_end = self.bwd;
        self.x(
            "user_annotation",
            "## backward ##",
            PID,
            BWD_TID,
            bwd_start - 500,
            bwd_end - bwd_start + 500,
            "\"External id\": 3",
        )?;
        self.cpu = self.cpu.max(bwd_end) + 10_000;
        // Optimizer.
        let opt_start = self.cpu;
        self.op_with_kernel(MAIN_TID, "aten::_foreach_add_", "[[], []]", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float>(at::native::(anonymous namespace)::TensorListMetadata<2>, at::native::(anonymous namespace)::BinaryOpListAlphaFunctor<float, 2, 2, 0>, std::plus<float>, float)", 200_000, 300_000, COMPUTE_STREAM, [320, 1, 1])?;
        self.op_with_kernel(MAIN_TID, "aten::_fused_adamw_", "[[], [], [], [], [], []]", "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*>(at::native::(anonymous namespace)::FusedOptimizerTensorListMetadata<4>, at::native::(anonymous namespace)::FusedAdamMathFunctor<float, 4, (at::native::ADAM_MODE)1, false>, double*, double, double, double, double, double, bool, double*, double*)", 600_000, 900_000, COMPUTE_STREAM, [640, 1, 1])?;
        let opt_end = self.cpu;
        self.x(
            "user_annotation",
            "Optimizer.step#AdamW.step",
            PID,
            MAIN_TID,
            opt_start - 500,
            opt_end - opt_start + 500,
            "\"External id\": 4",
        )?;
        // loss.item(): a blocking copy, then the host waits for the device.
        let item_start = self.cpu;
        self.cpu += 1_000;
        self.op_with_kernel(
            MAIN_TID,
            "aten::_local_scalar_dense",
            "[[]]",
            "Memcpy DtoH (Device -> Pageable)",
            2_000,
            4_000,
            COMPUTE_STREAM,
            [1, 1, 1],
        )?;
        let wait = self.gpu.saturating_sub(self.cpu) + 2_000;
        let t = self.cpu;
        self.x(
            "cuda_runtime",
            "cudaStreamSynchronize",
            PID,
            MAIN_TID,
            t,
            wait,
            "\"cbid\": 131, \"correlation\": 0",
        )?;
        self.cpu += wait + 3_000;
        self.x(
            "cpu_op",
            "aten::item",
            PID,
            MAIN_TID,
            item_start,
            self.cpu - item_start,
            "\"External id\": 5, \"Input Dims\": [[]]",
        )?;
        self.cpu += 5_000;
        let step_end = self.cpu.max(self.gpu);
        self.x(
            "user_annotation",
            &format!("ProfilerStep#{n}"),
            PID,
            MAIN_TID,
            step_start,
            step_end - step_start,
            "\"External id\": 0",
        )?;
        self.cpu = step_end + 20_000;
        self.gpu = self.gpu.max(self.comm);
        Ok(())
    }
}

/// Writes the trace; returns the number of `traceEvents` entries.
pub fn generate<W: Write>(cfg: &Config, w: &mut W) -> io::Result<u64> {
    let mut g = Gen {
        out: Counted { w, n: 0 },
        rng: Rng(cfg.seed),
        cpu: 50_000,
        bwd: 0,
        gpu: 0,
        comm: 0,
        corr: 1_000_000,
        ext: 100_000,
        events: 0,
        addr: 0,
        allocated: 4_000_000_000,
    };
    g.out.write_all(
        br#"{
  "schemaVersion": 1,
  "deviceProperties": [
    {
      "id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 84929347584,
      "computeMajor": 9, "computeMinor": 0,
      "maxThreadsPerBlock": 1024, "maxThreadsPerMultiprocessor": 2048,
      "regsPerBlock": 65536, "warpSize": 32,
      "sharedMemPerBlock": 49152, "numSms": 132,
      "sharedMemPerMultiprocessor": 233472
    }
  ],
  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1, "pg_count": 1, "pg_config": [], "nccl_version": "2.27.3"},
  "cupti_version": 26,
  "cuda_runtime_version": 12080,
  "cuda_driver_version": 12080,
  "trace_id": "TRACELIGHT_SYNTH",
  "traceEvents": [
"#,
    )?;
    for (pid, tid, name) in [(PID, MAIN_TID, "python"), (PID, BWD_TID, "autograd thread")] {
        g.sep()?;
        write!(g.out, "  {{\n    \"name\": \"thread_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": {pid}, \"tid\": {tid},\n    \"args\": {{\n      \"name\": \"{name}\"\n    }}\n  }}", us(0))?;
    }
    g.sep()?;
    write!(g.out, "  {{\n    \"name\": \"process_name\", \"ph\": \"M\", \"ts\": {}, \"pid\": {GPU_PID}, \"tid\": 0,\n    \"args\": {{\n      \"name\": \"GPU 0\"\n    }}\n  }}", us(0))?;
    let mut n = 0;
    loop {
        let done = match cfg.target_bytes {
            Some(t) => g.out.n >= t,
            None => n >= cfg.steps,
        };
        if done {
            break;
        }
        g.step(n + 1, cfg.layers)?;
        n += 1;
    }
    write!(g.out, "\n  ],\n  \"traceName\": \"tracelight-synth.pt.trace.json\",\n  \"displayTimeUnit\": \"ms\"\n}}\n")?;
    Ok(g.events)
}
