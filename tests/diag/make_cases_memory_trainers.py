#!/usr/bin/env python3
"""Writes the fourth set of diagnosis cases under tests/diag/cases-memory-trainers/ (job.yaml, train.log and
expect.json each), run through `oomfix diagnose [--job JOB] --json`.

These cover what logs from the field showed the first three sets missed (SPEC §3.6):
* the memory numbers of the OOM message in every wording torch has used (2.5+ `this process
  has`, 2.1 `total capacty` with the job listed as `Process N`, 1.x `(GPU 0; ... total capacity;
  ...)`, `private pools`, bytes/KiB/MiB/GiB): the `memory` object is checked field by field, the
  environment rule (another tenant holds the card: E whatever the phase) and the fragmentation
  hint;
* phase evidence: frames when there is no marker, and `timing: null` when nothing shows when;
  other trainers' logs (kohya sd-scripts and musubi-tuner `steps:` bars and rich log lines,
  DeepSpeed's `steps: N loss:` lines under diffusion-pipe, a ComfyUI trainer node);
* shapes of pasted logs: the per-process-fraction OOM, cuBLAS not initialised and cuDNN out of
  memory as hints, duplicated and interleaved stdout/stderr, `[time] [INFO]` prefixes, `> `
  quotes, Windows and WSL paths with CRLF, an error glued onto a bar frame, a misspelt `jobs:`
  key given with --job, and logs that are not text (refused with exit 65).

expect.json holds the verdict worked out by hand from SPEC §3 before oomfix was run on it, and
"memory" the account computed here from the message's numbers (sz() reads a size the way torch
prints it). The logs are made up in the trainers' own wording. Helpers come from make_cases_archs_captures.py.

Run it again after changing a case and review the diff; the logs are committed.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases_archs_captures as m2  # noqa: E402

OUT = os.path.join(HERE, "cases-memory-trainers")
ROOT, PKG = m2.ROOT, m2.PKG
job, echo, tframe, ui_bars, cr_bars = m2.job, m2.echo, m2.tframe, m2.ui_bars, m2.cr_bars
other_bars, dataset, ejr_box, tb, LORA = m2.other_bars, m2.dataset, m2.ejr_box, m2.tb, m2.LORA
F_TRAIN, F_SAMPLE, F_CACHE, F_LOAD = m2.F_TRAIN, m2.F_SAMPLE, m2.F_CACHE, m2.F_LOAD

UNITS = {"bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
cases = {}


def sz(text):
    """'23.55 GiB' -> bytes, rounded to the byte."""
    num, unit = text.split()
    whole, _, frac = num.partition(".")
    m = UNITS[unit]
    scale = 10 ** len(frac)
    return int(whole) * m + (int(frac or 0) * m + scale // 2) // scale


def account(capacity=None, free=None, requested=None, this=None, others=(), alloc=None,
            unused=None, this_pid=None, pools=None, limit=None, reserved_total=None):
    """The memory object of SPEC §3.6 from the message's sizes (None = not said)."""
    b = lambda v: None if v is None else sz(v)  # noqa: E731
    d = {"capacity": b(capacity), "free": b(free), "requested": b(requested),
         "this_process": b(this),
         "other_processes": [{"pid": p, "bytes": sz(s)} for p, s in others],
         "pytorch_allocated": b(alloc), "pytorch_reserved_unallocated": b(unused),
         "this_pid": this_pid, "private_pools": b(pools), "limit": b(limit)}
    if reserved_total is not None:  # 1.x: reserved in total, less what is allocated
        d["pytorch_reserved_unallocated"] = sz(reserved_total) - sz(alloc)
    job_b = d["this_process"]
    if job_b is None and alloc is not None:
        job_b = sz(alloc) + (d["pytorch_reserved_unallocated"] or 0)
    if job_b is None and limit is not None:
        job_b = sz(limit)
    un = None
    if capacity is not None and free is not None:
        un = max(0, sz(capacity) - sz(free) - (job_b or 0) - sum(sz(s) for _, s in others))
    d["unaccounted"] = un
    return d


def case(name, j, log, expect, raw=None, crlf=False):
    text = "\n".join(log) + "\n"
    if crlf:
        text = text.replace("\n", "\r\n")
    data = raw if raw is not None else text.encode("utf-8")
    cases[name] = (j, data, expect)


def exp(oom, timing, phase, step, sigs, kind, fixes, other=None, notes="", **more):
    d = {"oom": oom, "timing": timing, "phase": phase, "failed_step": step,
         "signatures": sorted(sigs), "model_kind": kind, "accept_first_fix": list(fixes),
         "other_failure": other, "notes": notes}
    d.update(more)
    return d


def fatal(msg, frames, cls="torch.OutOfMemoryError"):
    return ejr_box(msg) + tb(frames, "%s: %s" % (cls, msg))


OOM3 = ["cuda_oom", "torch_oom", "tried_to_allocate"]
ANY_B = ["gradient_checkpointing", "num_frames", "batch_size", "drop_largest_bucket"]

# ==== the memory numbers ==========================================================================

MSG25 = ("CUDA out of memory. Tried to allocate 1.25 GiB. GPU 0 has a total capacity of 23.52 GiB "
         "of which 702.19 MiB is free. Including non-PyTorch memory, this process has 22.82 GiB "
         "memory in use. Of the allocated memory 21.95 GiB is allocated by PyTorch, and 421.06 MiB "
         "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
         "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
         "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html"
         "#environment-variables)")
N = "oak_leaf_style"
j = job(N, "flux", batch=2)
case("m-torch25-this-process-step-4", j,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/oak") +
     ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 2, 2) +
     ui_bars(N, 0, 3, 3000) + fatal(MSG25, F_TRAIN),
     exp(True, "first_steps", "training", 4, OOM3, "image", ["batch_size"],
         notes="torch 2.5 wording; the job holds 22.82 of 23.52 GiB, so not E; 421 MiB unused "
               "beside 21.95 GiB allocated is under a quarter: no fragmentation hint.",
         memory=account("23.52 GiB", "702.19 MiB", "1.25 GiB", "22.82 GiB", (), "21.95 GiB",
                        "421.06 MiB"),
         hints=[]))

MSG_TENANT = ("CUDA out of memory. Tried to allocate 48.00 MiB. GPU 0 has a total capacity of "
              "47.53 GiB of which 43.94 MiB is free. Process 51120 has 5.68 GiB memory in use. "
              "Process 51877 has 7.62 GiB memory in use. Of the allocated memory 7.10 GiB is "
              "allocated by PyTorch, and 212.50 MiB is reserved by PyTorch but unallocated. If "
              "reserved but unallocated memory is large try setting "
              "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
N = "shared_card_portrait"
j = job(N, "flux", low_vram=False)
case("m-tenant-holds-card-load-is-e", j,
     echo(j) + ["Loading Flux model", "Loading transformer", "Quantizing transformer"] +
     fatal(MSG_TENANT, [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
                        ("toolkit/stable_diffusion_model.py", 702, "load_model",
                         "transformer.to(self.quantize_device, dtype=dtype)")]),
     exp(True, "environment", "model_load", None, OOM3 + [], "image", ["fresh_worker"],
         notes="Two processes seen hold 13.3 of 47.53 GiB, nothing is free: 34 GiB are held by "
               "something the job cannot see. The job is the process holding at least PyTorch's "
               "7.31 GiB: 51877. E whatever the phase, not low_vram.",
         memory=account("47.53 GiB", "43.94 MiB", "48.00 MiB", "7.62 GiB", [(51120, "5.68 GiB")],
                        "7.10 GiB", "212.50 MiB", this_pid=51877),
         hints=["other_process"]))

MSG21 = ("CUDA out of memory. Tried to allocate 160.00 MiB. GPU 0 has a total capacty of 15.74 GiB "
         "of which 56.81 MiB is free. Process 3391 has 15.68 GiB memory in use. Of the allocated "
         "memory 14.90 GiB is allocated by PyTorch, and 402.77 MiB is reserved by PyTorch but "
         "unallocated. If reserved but unallocated memory is large try setting max_split_size_mb "
         "to avoid fragmentation.  See documentation for Memory Management and "
         "PYTORCH_CUDA_ALLOC_CONF")
N = "t4_sdxl_logo"
j = job(N, "sdxl", quantize=False, ui=False)
case("m-torch21-capacty-own-process-step-40", j,
     echo(j) + ["Loading SDXL model"] + LORA + dataset(ROOT + "/datasets/logo") +
     [cr_bars(N, 0, 39, 3000)] + fatal(MSG21, F_TRAIN, cls="torch.cuda.OutOfMemoryError"),
     exp(True, "intermittent", "training", 40, OOM3, "image", ["drop_largest_bucket"],
         notes="torch 2.1 misspells capacity and, in a container, lists the job itself as "
               "Process 3391 (15.68 GiB covers PyTorch's 15.29): the card is the job's, and no "
               "other_process hint is given for it. D at 40.",
         memory=account("15.74 GiB", "56.81 MiB", "160.00 MiB", "15.68 GiB", (), "14.90 GiB",
                        "402.77 MiB", this_pid=3391),
         hints=[]))

MSG1X = ("CUDA out of memory. Tried to allocate 58.00 MiB (GPU 0; 11.76 GiB total capacity; "
         "7.21 GiB already allocated; 26.69 MiB free; 9.64 GiB reserved in total by PyTorch) If "
         "reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
         "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
N = "old_torch_3060"
j = job(N, "sd15", quantize=False, ui=False, steps=1000)
case("m-torch1-paren-sampling-fragmented", j,
     echo(j) + ["Loading SD model"] + LORA + dataset(ROOT + "/datasets/cats") +
     ["Skipping first sample due to config setting", cr_bars(N, 0, 250, 1000),
      other_bars("Generating Images", 0, 3, 10, joined=True)] +
     fatal(MSG1X, F_SAMPLE, cls="RuntimeError"),
     exp(True, "sampling", "sampling", 250, ["cuda_oom", "tried_to_allocate"], "image",
         ["lighter_sampling", "disable_sampling"],
         notes="torch 1.x: sizes before their words. No process is named: this_process null, "
               "the account counts the job as what PyTorch reserved (9.64 GiB). 2.43 GiB "
               "reserved but unused beside 7.21 allocated: fragmentation hint.",
         memory=account("11.76 GiB", "26.69 MiB", "58.00 MiB", None, (), "7.21 GiB",
                        reserved_total="9.64 GiB"),
         hints=["fragmentation"]))

MSG_POOLS = ("CUDA out of memory. Tried to allocate 512.00 KiB. GPU 0 has a total capacity of "
             "79.25 GiB of which 3.12 MiB is free. Including non-PyTorch memory, this process has "
             "79.23 GiB memory in use. Of the allocated memory 58.40 GiB is allocated by PyTorch, "
             "with 2.00 GiB allocated in private pools (e.g., CUDA Graphs), and 19.81 GiB is "
             "reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
             "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")
N = "h100_video_pools"
j = job(N, "wan21:14b", frames=33, batch=1, gc=True)
case("m-private-pools-fragmentation-hint-step-3", j,
     echo(j) + m2.load_msgs("wan") + LORA + dataset(ROOT + "/datasets/waves", video=True) +
     ui_bars(N, 0, 2, 3000) + fatal(MSG_POOLS, F_TRAIN),
     exp(True, "first_steps", "training", 3, OOM3, "video", ["num_frames"],
         notes="private pools clause; 19.81 GiB unused beside 58.40 GiB allocated: the "
               "fragmentation hint (environment advice); the first fix stays a YAML one.",
         memory=account("79.25 GiB", "3.12 MiB", "512.00 KiB", "79.23 GiB", (), "58.40 GiB",
                        "19.81 GiB", pools="2.00 GiB"),
         hints=["fragmentation"]))

N = "async_no_numbers"
j = job(N, "flux")
case("m-async-no-numbers-memory-null", j,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/x") +
     ui_bars(N, 0, 5, 3000) + ejr_box("CUDA error: out of memory") +
     tb(F_TRAIN, "RuntimeError: CUDA error: out of memory"),
     exp(True, "first_steps", "training", 6, ["cuda_error_oom"], "image", ["drop_largest_bucket"],
         notes="The asynchronous form has no numbers: memory is null.", memory=None, hints=[]))

# ==== phase evidence ==============================================================================

MSG = m2.oom_new("3.00 GiB", "1.12 GiB")
case("p-stderr-only-frames-caching", None,
     tb(F_CACHE, "torch.OutOfMemoryError: " + MSG),
     exp(True, "before_training", "caching", None, OOM3, None, ["drop_largest_bucket", "num_frames"],
         notes="stderr only, no marker: the frames (cache_latents) name the phase.", no_job=True))

case("p-nothing-shows-when-null", None,
     ["Traceback (most recent call last):",
      '  File "/opt/trainer/main.py", line 40, in <module>', "    run()",
      '  File "/opt/trainer/main.py", line 31, in run', "    out = net(x)",
      '  File "%s/torch/nn/modules/module.py", line 1751, in _call_impl' % PKG,
      "    return forward_call(*args, **kwargs)",
      "torch.OutOfMemoryError: " + MSG],
     exp(True, None, None, None, OOM3, None, [],
         notes="No marker, no frame that names a phase, no bar: the log does not show when. "
               "timing and phase null, no first fix (SPEC §3.6: never a guess).", no_job=True))

KOHYA_INFO = [
    "2026-11-30 09:12:01 INFO     Loading settings from /workspace/cfg/lora.toml...      train_util.py:4174",
    "                    INFO     prepare tokenizer                                  train_util.py:4625",
    "2026-11-30 09:12:04 INFO     Loading dataset config from /workspace/cfg/ds.toml  train_network.py:304",
    "                    INFO     loading model for process 0/1                      train_util.py:5147",
    "2026-11-30 09:12:30 INFO     caching latents.                                   train_util.py:1043",
    "100%|\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588\u2588| 24/24 [00:09<00:00,  2.61it/s]",
    "2026-11-30 09:12:41 INFO     create LoRA network. base dim (rank): 16, alpha: 8  lora.py:935",
    "running training / \u5b66\u7fd2\u958b\u59cb",
    "  num train images * repeats / \u5b66\u7fd2\u753b\u50cf\u306e\u6570\u00d7\u7e70\u308a\u8fd4\u3057\u56de\u6570: 240",
]
K_FRAMES = [
    '  File "/workspace/sd-scripts/train_network.py", line 1115, in <module>', "    trainer.train(args)",
    '  File "/workspace/sd-scripts/train_network.py", line 890, in train',
    "    noise_pred = self.call_unet(",
    '  File "/workspace/sd-scripts/train_network.py", line 124, in call_unet',
    "    noise_pred = unet(noisy_latents, timesteps, text_conds).sample",
]
case("p-kohya-step-1-not-before-training", None,
     KOHYA_INFO + ["steps:   0%|          | 0/2400 [00:00<?, ?it/s]", "",
                   "epoch 1/10", "Traceback (most recent call last):"] + K_FRAMES +
     ["torch.cuda.OutOfMemoryError: " + MSG],
     exp(True, "first_steps", "training", 1, OOM3, None, ANY_B,
         notes="kohya sd-scripts: rich log lines (\"Loading settings from\" is not a model load), "
               "the `steps:` bar at 0/2400 and a call_unet frame: step 1, B.", no_job=True))

case("p-kohya-no-bar-null", None,
     KOHYA_INFO + ["Traceback (most recent call last):"] + K_FRAMES[:4] +
     ['  File "%s/torch/nn/modules/module.py", line 1751, in _call_impl' % PKG,
      "    return forward_call(*args, **kwargs)",
      "torch.cuda.OutOfMemoryError: " + MSG],
     exp(True, None, None, None, OOM3, None, [],
         notes="kohya stdout only (the bar went elsewhere), a frame in train(): train() also "
               "loads and caches, so nothing shows when. Not 'before training'.", no_job=True))

case("p-musubi-steps-bar-step-13", None,
     ["INFO:musubi_tuner.hv_train_network:preparing accelerator",
      "steps:   0%|          | 0/1000 [00:00<?, ?it/s]",
      "".join("\rsteps:   1%%|          | %d/1000 [00:%02d<30:00,  1.80s/it, avr_loss=0.0%d]" % (n, n, 40 + n)
              for n in range(1, 13)),
      "Traceback (most recent call last):",
      '  File "/workspace/musubi-tuner/src/musubi_tuner/hv_train_network.py", line 2120, in train',
      "    model_pred, target = self.call_dit(",
      '  File "/workspace/musubi-tuner/src/musubi_tuner/wan_train_network.py", line 388, in call_dit',
      "    model_pred = model(",
      "torch.OutOfMemoryError: " + MSG],
     exp(True, "intermittent", "training", 13, OOM3, None, ["drop_largest_bucket", "num_frames"],
         notes="musubi-tuner's `steps:` bar (avr_loss, not lr/loss) at 12 done, call_dit: step 13, "
               "after ten good steps: D.", no_job=True))

case("p-diffusion-pipe-step-lines", None,
     ["[2026-11-30 10:01:02,114] [INFO] [engine.py:1305:_configure_optimizer] Using client Optimizer",
      "Started new epoch: 1"] +
     ["steps: %d loss: 0.%04d iter time (s): 6.912 samples/sec: 1.157" % (n, 900 - n) for n in range(1, 6)] +
     ["Traceback (most recent call last):",
      '  File "/workspace/diffusion-pipe/train.py", line 512, in <module>',
      "    loss = model_engine.train_batch().item()",
      '  File "%s/deepspeed/runtime/pipe/engine.py", line 389, in train_batch' % PKG,
      "    self._exec_schedule(sched)",
      "torch.OutOfMemoryError: " + MSG],
     exp(True, "first_steps", "training", 6, OOM3, None, ANY_B,
         notes="diffusion-pipe: DeepSpeed prints `steps: N loss:` after each step; 5 done, the "
               "frame train_batch: step 6, B.", no_job=True))

FRAC = ["Currently allocated     : 9.12 GiB", "Requested               : 54.00 MiB",
        "Device limit            : 23.99 GiB", "Free (according to CUDA): 13.05 GiB",
        "PyTorch limit (set by user-supplied memory fraction)", "                        : 9.15 GiB"]
case("p-comfyui-fraction-oom-null", None,
     ["got prompt", "Requested to load Flux", "loaded completely 12000.0 11350.3 True",
      "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)"]
     + FRAC +
     ["Traceback (most recent call last):",
      '  File "C:\\ComfyUI\\execution.py", line 496, in execute',
      "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)",
      '  File "C:\\ComfyUI\\comfy_extras\\nodes_train.py", line 720, in train',
      "    loss.backward()",
      '  File "C:\\ComfyUI\\python_embeded\\Lib\\site-packages\\torch\\_tensor.py", line 626, in backward',
      "    torch.autograd.backward(",
      "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)"]
     + FRAC + ["", "Prompt executed in 41.20 seconds"],
     exp(True, None, "training", None, ["memory_fraction_oom", "torch_oom"], None, [],
         notes="A ComfyUI trainer node: the fraction OOM counts as GPU OOM; the backward frame "
               "names training but no bar shows the step: timing null (B or D cannot be told), "
               "no first fix. The numbers on the lines "
               "after the message go into the account; a limit was set: its hint, and no E. "
               "ComfyUI's '!!! Exception during processing !!!' line and the traceback's last "
               "line are one event.",
         memory=account("23.99 GiB", "13.05 GiB", "54.00 MiB", None, (), "9.12 GiB", None,
                        limit="9.15 GiB"),
         hints=["memory_fraction"], counts={"memory_fraction_oom": 1}, no_job=True))

case("p-comfyui-ksampler-not-a-baseline-sample", None,
     ["got prompt", "model weight dtype torch.float16, manual cast: None",
      "Requested to load SDXL", "Loading 1 new model", "loaded completely 9500.0 4897.05 True",
      "  0%|          | 0/30 [00:00<?, ?it/s]",
      "!!! Exception during processing !!! CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 "
      "has a total capacity of 7.63 GiB of which 412.50 MiB is free. Including non-PyTorch memory, "
      "this process has 7.21 GiB memory in use. Of the allocated memory 6.70 GiB is allocated by "
      "PyTorch, and 330.12 MiB is reserved by PyTorch but unallocated.",
      "Traceback (most recent call last):",
      '  File "/home/ren/ComfyUI/execution.py", line 496, in execute', "    output_data = get_output_data(",
      '  File "/home/ren/ComfyUI/nodes.py", line 1525, in sample', "    return common_ksampler(",
      '  File "/home/ren/ComfyUI/comfy/samplers.py", line 1021, in sample', "    output = executor.execute(",
      "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.50 GiB. GPU 0 has a total "
      "capacity of 7.63 GiB of which 412.50 MiB is free. Including non-PyTorch memory, this process "
      "has 7.21 GiB memory in use. Of the allocated memory 6.70 GiB is allocated by PyTorch, and "
      "330.12 MiB is reserved by PyTorch but unallocated.", "", "Prompt executed in 3.10 seconds"],
     exp(True, None, None, None, OOM3, None, [],
         notes="ComfyUI drawing an image: its 'Loading 1 new model' and its own sample() are not "
               "AI Toolkit's model load or baseline sample. Nothing shows a trainer's phase: null.",
         memory=account("7.63 GiB", "412.50 MiB", "1.50 GiB", "7.21 GiB", (), "6.70 GiB",
                        "330.12 MiB"),
         counts={"cuda_oom": 1}, no_job=True))

N = "python_logging"
j = job(N, "flux")
plain = (echo(j) + m2.load_msgs("flux") + ["Quantizing transformer"] + fatal(MSG, F_LOAD))
case("f-python-logging-format", j,
     ["2026-12-01 08:00:%02d,%03d - INFO - %s" % (i % 60, i * 7 % 1000, l) for i, l in enumerate(plain)],
     exp(True, "before_training", "model_load", None, OOM3, "image",
         ["low_vram", "drop_largest_bucket"],
         notes="A wrapper logging each line as '<time> - INFO - <line>': A in model_load. The "
               "plan counts low_vram as in place for this quantized FLUX job and moves on."))

# ==== shapes seen in the field ====================================================================

N = "cublas_at_load"
j = job(N, "flux")
CUBLAS_NI = "CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`"
case("f-cublas-not-initialized-at-load-hint", j,
     echo(j) + m2.load_msgs("flux") + ejr_box(CUBLAS_NI) + tb(F_LOAD, "RuntimeError: " + CUBLAS_NI),
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="cuBLAS not initialised while loading: a hint that memory may be the cause, not "
               "a verdict (SPEC §3.6).", hints=["cublas_not_initialized"], memory=None))

N = "cublas_late"
j = job(N, "flux")
case("f-cublas-not-initialized-late-no-hint", j,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/late") +
     ui_bars(N, 0, 500, 3000)[::50] + ejr_box(CUBLAS_NI) + tb(F_TRAIN, "RuntimeError: " + CUBLAS_NI),
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="At step 501 cuBLAS failing to start says nothing about memory: no hint.",
         hints=[]))

N = "cudnn_step1"
j = job(N, "sdxl", quantize=False)
CUDNN = "cuDNN error: CUDNN_STATUS_NOT_ENOUGH_MEMORY"
case("f-cudnn-not-enough-memory-hint", j,
     echo(j) + ["Loading SDXL model"] + LORA + dataset(ROOT + "/datasets/c") +
     ui_bars(N, 0, 0, 3000) + ejr_box(CUDNN) + tb(F_TRAIN, "RuntimeError: " + CUDNN),
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="cuDNN out of memory in step 1: a hint, not a GPU OOM verdict.",
         hints=["cudnn_no_memory"]))

N = "interleaved_streams"
j = job(N, "flux")
body = tb(F_TRAIN, "torch.OutOfMemoryError: " + MSG)
mixed = []
for i, line in enumerate(body):  # stdout's "Error running job" lands inside stderr's traceback
    mixed.append(line)
    if i == 4:
        mixed.append("Error running job: " + MSG)
case("f-interleaved-and-duplicated-traceback", j,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/i") + ui_bars(N, 0, 6, 3000)
     + mixed + ["", "========================================", "Result:", " - 0 completed jobs",
                " - 1 failure", "========================================"] + body,
     exp(True, "first_steps", "training", 7, OOM3, "image", ["drop_largest_bucket"],
         notes="stderr and stdout interleaved, the traceback printed twice (a tee of both "
               "streams): one event, B at 7.", counts={"cuda_oom": 1, "torch_oom": 1}))


def stamp_info(lines):
    return ["[2026-12-01 08:%02d:%02d] [INFO] %s" % (i // 60 % 60, i % 60, l) for i, l in enumerate(lines)]


N = "stamped_info"
j = job(N, "flux")
plain = (echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/s") +
         ui_bars(N, 0, 2, 3000) + fatal(MSG, F_TRAIN))
case("f-timestamp-info-prefix", j, stamp_info(plain),
     exp(True, "first_steps", "training", 3, OOM3, "image", ["drop_largest_bucket"],
         notes="Every line '[time] [INFO] ': both prefixes are dropped; B at 3 as without them."))

case("f-clock-bracket-level-prefix", j,
     ["[12/01/2026 08:%02d:%02d PM] [WARNING] %s" % (i // 60 % 60, i % 60, l) for i, l in enumerate(plain)],
     exp(True, "first_steps", "training", 3, OOM3, "image", ["drop_largest_bucket"],
         notes="The same log stamped '[MM/DD/YYYY hh:mm:ss PM] [WARNING] ': both prefixes go."))

N = "quoted_paste"
j = job(N, "flux")
plain = (echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/q") +
         ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 1, 2)
         + fatal(MSG, F_SAMPLE))
case("f-quoted-from-an-issue", j, ["> " + l if l else ">" for l in plain],
     exp(True, "before_training", "baseline_sampling", None, OOM3, "image",
         ["lighter_sampling", "disable_sampling"],
         notes="Every line quoted with '> ' (an issue comment): A in the baseline sample."))

WIN = "C:\\Users\\mika\\ai-toolkit"
N = "windows_cache"
j = job(N, "flux")
win_tb = (["Traceback (most recent call last):",
           '  File "%s\\run.py", line 120, in <module>' % WIN, "    main()",
           '  File "%s\\jobs\\process\\BaseSDTrainProcess.py", line 1960, in run' % WIN,
           "    self.data_loader = get_dataloader_from_datasets(",
           '  File "%s\\toolkit\\dataloader_mixins.py", line 1950, in cache_latents_all_latents' % WIN,
           "    latent = self.sd.encode_images(imgs)",
           "torch.OutOfMemoryError: " + MSG])
case("f-windows-paths-crlf", j,
     echo(j) + m2.load_msgs("flux") + LORA + ["Dataset: C:\\data\\windows_cache"] + ejr_box(MSG)
     + win_tb, exp(True, "before_training", "caching", None, OOM3, "image", ["drop_largest_bucket"],
                   notes="Windows: backslash paths in the frames and CRLF endings; A in caching."),
     crlf=True)

N = "wsl_sample"
j = job(N, "flux", steps=1000)
wsl = [(p.replace(ROOT, "/mnt/c/Users/mika/ai-toolkit"), l, f, src) for p, l, f, src in F_SAMPLE]
case("f-wsl-sampling", j,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/w") +
     ["Skipping first sample due to config setting"] + ui_bars(N, 0, 250, 1000)[::25] +
     other_bars("Generating Samples", 0, 1, 2) + fatal(MSG, wsl),
     exp(True, "sampling", "sampling", 250, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="WSL paths (/mnt/c/...): C at 250."))

N = "glued_error"
j = job(N, "flux")
glued = cr_bars(N, 0, 4, 3000) + "\r" + tframe(N, 4, 3000)[:24] + "torch.OutOfMemoryError: " + MSG
case("f-error-glued-onto-bar", None,
     [glued] + ["Error running job: " + MSG],
     exp(True, "first_steps", "training", 5, OOM3, None, ANY_B,
         notes="The exception line written into a half-drawn bar frame (no traceback header): "
               "the last whole frame (4 done) gives the step, 5.", no_job=True))

N = "misspelt_key"
j = job(N, "flux")
misspelt = "jobs" + m2.job_yaml(j)[3:]
assert misspelt.startswith("jobs:")
case("f-misspelt-jobs-key-diagnosed-anyway", misspelt,
     echo(j) + m2.load_msgs("flux") + LORA + dataset(ROOT + "/datasets/m") +
     ui_bars(N, 0, 2, 3000) + fatal(MSG, F_TRAIN),
     exp(True, "first_steps", "training", 3, OOM3, "image", ANY_B,
         notes="--job names a file whose top-level key is 'jobs': exit 0, the log diagnosed "
               "without the job, the job's problem in job_error; its model.arch (flux) is "
               "still readable, so the kind is image.",
         job_error={"message": "not an AI Toolkit job"}))

utf16 = ("\n".join(echo(job("utf16", "flux"))[:3] + ["Error running job: " + MSG]) + "\n")
case("f-utf16-redirect-refused", None, [],
     exp(False, None, None, None, [], None, [], notes="PowerShell's > writes UTF-16: exit 65.",
         exit=65, no_job=True), raw=b"\xff\xfe" + utf16.encode("utf-16-le"))

case("f-mostly-nul-refused", None, [],
     exp(False, None, None, None, [], None, [], notes="A text head, then NULs: exit 65.",
         exit=65, no_job=True), raw=b"Running 1 job\n" + b"\0" * 70000)


def main():
    m2.write_cases(OUT, {n: (j, data, e, False) for n, (j, data, e) in cases.items()})


if __name__ == "__main__":
    main()
