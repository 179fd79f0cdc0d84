#!/usr/bin/env python3
"""Writes the second set of diagnosis cases under tests/diag/cases-archs-captures/ (job.yaml, train.log and
expect.json each), run through `oomfix diagnose --job JOB --json` like the shared cases.

Each case is an invented AI Toolkit run in a style or wording the first set does not cover:
other archs, older and ROCm torch wording, other phases, other log captures (web UI, terminal,
script(1), docker timestamps, stderr only, duplicated, truncated), decoys and non-OOM deaths.
The job files are written from the same dict as the trainer's JSON echo in the log, so the two
always agree. expect.json holds the SPEC §3 verdict worked out by hand from the rules; "notes"
says why. Keys beyond the shared format: "no_job" (run without --job).

Run it again after changing a case and review the diff; the logs are committed.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases-archs-captures")
ROOT = "/app/ai-toolkit"
PKG = "/usr/local/lib/python3.12/dist-packages"

# ---- job files ----


def job(name, arch, res=(512, 768, 1024), batch=1, gc=None, frames=None, sw=1024, sh=1024,
        sframes=None, low_vram=False, quantize=True, steps=3000, ui=True, train_extra=None,
        model_extra=None, ds_extra=None, sample_extra=None, proc_extra=None, folder=None,
        prompts=("a photo of sks dog on a sofa", "sks dog running on a beach")):
    """A job as the web UI writes it (ui=True) or a hand-written one, as a dict."""
    folder = folder or "%s/datasets/%s" % (ROOT, name.replace(" ", "_"))
    ds = {"folder_path": folder, "caption_ext": "txt", "caption_dropout_rate": 0.05,
          "cache_latents_to_disk": True, "resolution": list(res)}
    if frames is not None:
        ds["num_frames"] = frames
    ds.update(ds_extra or {})
    train = {"batch_size": batch, "steps": steps, "gradient_accumulation": 1,
             "train_unet": True, "train_text_encoder": False}
    if gc is not None:
        train["gradient_checkpointing"] = gc
    train.update({"noise_scheduler": "flowmatch", "optimizer": "adamw8bit", "lr": 0.0001,
                  "dtype": "bf16", "skip_first_sample": False, "disable_sampling": False})
    train.update(train_extra or {})
    model = {"name_or_path": "org/%s" % arch.split(":")[0], "arch": arch, "quantize": quantize,
             "qtype": "qfloat8", "quantize_te": quantize, "low_vram": low_vram}
    model.update(model_extra or {})
    sample = {"sampler": "flowmatch", "sample_every": 250, "width": sw, "height": sh,
              "samples": [{"prompt": p} for p in prompts], "seed": 42, "guidance_scale": 4,
              "sample_steps": 25}
    if sframes is not None:
        sample["num_frames"] = sframes
        sample["fps"] = 16
    sample.update(sample_extra or {})
    proc = {"type": "diffusion_trainer" if ui else "sd_trainer",
            "training_folder": ROOT + "/output"}
    if ui:
        proc.update({"sqlite_db_path": "./aitk_db.db", "device": "cuda",
                     "performance_log_every": 10})
    proc.update({"trigger_word": "sks", "network": {"type": "lora", "linear": 32,
                                                    "linear_alpha": 32},
                 "save": {"dtype": "bf16", "save_every": 250, "max_step_saves_to_keep": 4},
                 "datasets": [ds], "train": train, "model": model, "sample": sample})
    proc.update(proc_extra or {})
    return {"job": "extension", "config": {"name": name, "process": [proc]},
            "meta": {"name": "[name]", "version": "1.0"}}


def yscalar(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return repr(v)
    return json.dumps(v)


def ydump(v, ind=0):
    pad = " " * ind
    out = []
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, dict) and x:
                out.append("%s%s:" % (pad, k))
                out += ydump(x, ind + 2)
            elif isinstance(x, list) and x and isinstance(x[0], dict):
                out.append("%s%s:" % (pad, k))
                for item in x:
                    sub = ydump(item, ind + 4)
                    out.append("%s  - %s" % (pad, sub[0].lstrip()))
                    out += sub[1:]
            elif isinstance(x, list):
                out.append("%s%s: [%s]" % (pad, k, ", ".join(yscalar(i) for i in x)))
            elif isinstance(x, dict):
                out.append("%s%s: {}" % (pad, k))
            else:
                out.append("%s%s: %s" % (pad, k, yscalar(x)))
    return out


def job_yaml(j):
    return "\n".join(ydump(j)) + "\n"


# ---- log pieces ----


def echo(j):
    """run.py's first line, the JSON echo of process[0], the UI lines and the job banner."""
    proc = j["config"]["process"][0]
    name = j["config"]["name"]
    out = ["Running 1 job"] + json.dumps(proc, indent=4).split("\n")
    if proc["type"] == "diffusion_trainer":
        out += ["Using SQLite database at ./aitk_db.db",
                'Job ID: "4f1c2d9e-7a3b-4c55-9e21-%012d"' % (len(name) * 7919)]
    return out + ["", "#############################################", "# Running job: " + name,
                  "#############################################", "", "", "Running  1 process"]


def webbar(desc, n, total, post="", width=10):
    pct = n * 100 // total if total else 0
    full = n * width // total if total else 0
    bar = "\u2588" * full + " " * (width - full)
    d = desc + ": " if desc else ""
    rate = "?it/s" if n == 0 else "1.62s/it"
    left = "?" if n == 0 else "%02d:%02d" % ((total - n) * 2 // 60 % 60, (total - n) * 2 % 60)
    return "%s%3d%%|%s| %d/%d [%02d:%02d<%s, %s%s]" % (d, pct, bar, n, total, n * 2 // 60 % 60,
                                                     n * 2 % 60, left, rate, post)


def tframe(name, n, total):
    post = ", lr: 1.0e-04 loss: %.3e" % (0.3 + (n * 37 % 100) / 1000.0) if n > 0 else ""
    return webbar(name, n, total, post)


def ui_bars(name, a, b, total):
    """Web UI log: one progress update per line."""
    return [tframe(name, n, total) for n in range(a, b + 1)]


def cr_bars(name, a, b, total):
    """Terminal log: frames joined by \\r on one physical line (no newline at the end)."""
    return "".join("\r" + tframe(name, n, total) for n in range(a, b + 1))


def other_bars(desc, a, b, total, joined=False):
    fr = [webbar(desc, n, total) for n in range(a, b + 1)]
    return "".join("\r" + f for f in fr) if joined else fr


def load_msgs(kind):
    if kind == "flux":
        return ["Loading Flux model", "Loading transformer", "Quantizing transformer", "Loading VAE",
                "Loading T5", "Quantizing T5", "Loading CLIP", "Making pipe", "Preparing Model"]
    if kind == "wan":
        return ["Loading Wan model", "Loading transformer", "Quantizing Transformer",
                "Moving transformer to CPU", "Loading UMT5EncoderModel",
                "Quantizing UMT5EncoderModel", "Moving transformer back to GPU", "Loading VAE",
                "Making pipe", "Preparing Model"]
    return ["Loading %s model" % kind, "Loading transformer", "Quantizing Transformer",
            "Text Encoder", "Quantizing Text Encoder", "Loading VAE", "Making pipe",
            "Preparing Model", "Model Loaded"]


LORA = ["create LoRA network. base dim (rank): 32, alpha: 32",
        "neuron dropout: p=None, rank dropout: p=None, module dropout: p=None",
        "create LoRA for Text Encoder: 0 modules.", "create LoRA for U-Net: 400 modules."]


def dataset(folder, res=512, video=False, n=24, joined=False, cache=True):
    what = "videos" if video else "images"
    out = ["Dataset: " + folder, "  -  Preprocessing %s dimensions" % ("video" if video else "image")]
    pre = other_bars("", 0, n, n)
    out += ["".join("\r" + f for f in [pre[0], pre[-1]])] if joined else [pre[0], pre[-1]]
    out += ["  -  Found %d %s" % (n, what), "Bucket sizes for %s:" % folder,
            "%dx%d%s: %d files" % (res, res, "x33f" if video else "", n), "1 buckets made"]
    if cache:
        out += ["Caching latents for " + folder, " - Saving latents to disk"]
        c = other_bars("Caching latents to disk", 0, n, n)
        out += ["".join("\r" + f for f in [c[0], c[n // 2], c[-1]])] if joined else [c[0], c[n // 2], c[-1]]
    return out


def ejr_box(msg):
    return ["Error running job: " + msg, "", "========================================",
            "Result:", " - 0 completed jobs", " - 1 failure",
            "========================================"]


def tb(frames, last, head=True):
    out = ["Traceback (most recent call last):"] if head else []
    out += ['  File "%s/run.py", line 120, in <module>' % ROOT, "    main()",
            '  File "%s/run.py", line 108, in main' % ROOT, "    raise e",
            '  File "%s/run.py", line 96, in main' % ROOT, "    job.run()",
            '  File "%s/jobs/ExtensionJob.py", line 22, in run' % ROOT, "    process.run()"]
    for path, line, fn, src in frames:
        p = path if path.startswith("/") else "%s/%s" % (ROOT, path)
        out += ['  File "%s", line %d, in %s' % (p, line, fn), "    " + src]
    return out + [last]


def skip(k):
    return ["", "################################################",
            "# OOM during training step, skipping batch %d/3 #" % k,
            "################################################", ""]


ABORT = "OOM during training step 3 times in a row, aborting training"

F_TRAIN = [("jobs/process/BaseSDTrainProcess.py", 2625, "run",
            "loss_dict = self.hook_train_loop(batch_list)"),
           ("extensions_built_in/sd_trainer/SDTrainer.py", 2263, "hook_train_loop",
            "loss = self.train_single_accumulation(batch)"),
           ("extensions_built_in/sd_trainer/SDTrainer.py", 2180, "train_single_accumulation",
            "self.accelerator.backward(loss)"),
           (PKG + "/torch/autograd/__init__.py", 347, "backward", "_engine_run_backward(")]
F_SAMPLE = [("jobs/process/BaseSDTrainProcess.py", 2701, "run", "self.sample(self.step_num)"),
            ("jobs/process/BaseSDTrainProcess.py", 378, "sample",
             "self.sd.generate_images(gen_img_config_list, sampler=sample_config.sampler)"),
            ("toolkit/models/base_model.py", 702, "generate_images",
             "img = self.generate_single_image("),
            (PKG + "/diffusers/models/autoencoders/autoencoder_kl.py", 323, "decode",
             "decoded = self._decode(z).sample")]
F_BASELINE = [("jobs/process/BaseSDTrainProcess.py", 2478, "run", "self.sample(self.step_num)")] + F_SAMPLE[1:]
F_LOAD = [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
          ("toolkit/models/base_model.py", 420, "load_model", "self.transformer.to(self.device_torch)")]
F_QUANT = [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
           ("extensions_built_in/diffusion_models/wan22/wan22_14b_model.py", 301, "load_model",
            "quantize_model(self, transformer_1)"),
           ("toolkit/util/quantize.py", 452, "quantize_model", "quantize(block, weights=qtype)"),
           (PKG + "/optimum/quanto/quantize.py", 71, "quantize", "_quantize_submodule(model, name, m)")]
F_CACHE = [("jobs/process/BaseSDTrainProcess.py", 1960, "run", "self.data_loader = get_dataloader_from_datasets("),
           ("toolkit/data_loader.py", 707, "get_dataloader_from_datasets", "dataset.setup_epoch()"),
           ("toolkit/dataloader_mixins.py", 1940, "cache_latents_all_latents",
            "latent = self.sd.encode_images(imgs)"),
           ("toolkit/models/base_model.py", 880, "encode_images",
            "latents = self.vae.encode(images).latent_dist.sample()")]
F_TE = [("jobs/process/BaseSDTrainProcess.py", 1960, "run", "self.data_loader = get_dataloader_from_datasets("),
        ("toolkit/dataloader_mixins.py", 2290, "cache_text_embeddings",
         "prompt_embeds = self.sd.encode_prompt(captions)"),
        ("extensions_built_in/diffusion_models/qwen_image/qwen_image.py", 512, "get_prompt_embeds",
         "prompt_embeds = self.text_encoder(input_ids)")]
F_UNLOAD = [("jobs/process/BaseSDTrainProcess.py", 2460, "run", "self.hook_before_train_loop()"),
            ("extensions_built_in/sd_trainer/SDTrainer.py", 368, "hook_before_train_loop",
             "self.sd.text_encoder_to('cpu')"),
            (PKG + "/torch/nn/modules/module.py", 1355, "to", "return self._apply(convert)")]
F_SAVE = [("jobs/process/BaseSDTrainProcess.py", 2760, "run", "self.save()"),
          ("jobs/process/BaseSDTrainProcess.py", 690, "save", "self.network.save_weights("),
          ("toolkit/network_mixins.py", 540, "save_weights", "v = v.detach().clone().to(\"cpu\").to(dtype)")]


def oom_new(alloc="2.00 GiB", free="1.06 GiB", total="23.55 GiB", pid=None, word="CUDA",
            used="22.47 GiB"):
    # `used` is what the job holds; on a bigger card pass it, or the rest reads as another tenant
    proc = ("Process %d has %s memory in use. " % (pid, used) if pid else
            "Including non-PyTorch memory, this process has %s memory in use. " % used)
    return ("%s out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which %s "
            "is free. %sOf the allocated memory 21.80 GiB is allocated by PyTorch, and 251.38 MiB "
            "is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try "
            "setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html"
            "#environment-variables)" % (word, alloc, total, free, proc))


def oom_21(alloc="20.00 MiB", free="0 bytes"):
    return ("CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacty of 23.65 GiB of "
            "which %s is free. Process 2210 has 23.63 GiB memory in use. Of the allocated memory "
            "22.91 GiB is allocated by PyTorch, and 312.50 MiB is reserved by PyTorch but "
            "unallocated. If reserved but unallocated memory is large try setting max_split_size_mb "
            "to avoid fragmentation.  See documentation for Memory Management and "
            "PYTORCH_CUDA_ALLOC_CONF" % (alloc, free))


def oom_old(alloc="36.00 MiB", free="0 bytes"):
    return ("CUDA out of memory. Tried to allocate %s (GPU 0; 7.93 GiB total capacity; 6.80 GiB "
            "already allocated; %s free; 6.95 GiB reserved in total by PyTorch) If reserved memory "
            "is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See "
            "documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" % (alloc, free))


ASYNC_TAIL = ["CUDA kernel errors might be asynchronously reported at some other API call, so the "
              "stacktrace below might be incorrect.",
              "For debugging consider passing CUDA_LAUNCH_BLOCKING=1",
              "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
CUBLAS = "CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`"

# ---- cases ----

cases = {}


def case(name, j, log, expect, raw=None, gz=False):
    """log: list of physical lines (joined with \\n) or raw bytes."""
    data = raw if raw is not None else ("\n".join(log) + "\n").encode("utf-8", "surrogateescape")
    cases[name] = (j, data, expect, gz)  # gz: generated at test time, not committed


def exp(oom, timing, phase, step, sigs, kind, fixes, other=None, notes="", **more):
    d = {"oom": oom, "timing": timing, "phase": phase, "failed_step": step,
         "signatures": sorted(sigs), "model_kind": kind,
         "first_fix": fixes[0] if fixes else None, "accept_first_fix": list(fixes),
         "other_failure": other, "notes": notes}
    d.update(more)
    return d


OOM3 = ["cuda_oom", "torch_oom", "tried_to_allocate"]

# 1. Old torch (< 2.0) wording, RuntimeError only, "0 bytes free", while caching latents of a
#    conservative SDXL job: A in caching + zero_bytes_free + conservative -> E.
j = job("sdxl_pixelart", "sdxl", res=(512, 768), quantize=False, ui=False, steps=2000)
case("e-old-torch-caching-conservative", j,
     echo(j) + ["Loading SDXL model", "Loading UNet", "Loading VAE", "Preparing Model"] + LORA
     + dataset(ROOT + "/datasets/sdxl_pixelart", 768, joined=True)[:-1]
     + [other_bars("Caching latents to disk", 0, 3, 24, joined=True)]
     + ejr_box(oom_old()) + tb(F_CACHE, "RuntimeError: " + oom_old()),
     exp(True, "environment", "caching", None, ["cuda_oom", "tried_to_allocate", "zero_bytes_free"],
         "image", ["fresh_worker"],
         notes="Torch < 2.0 message '(GPU 0; 7.93 GiB total capacity; ...; 0 bytes free; ...)' as a "
               "plain RuntimeError (no torch_oom), while caching latents. Job is conservative (batch 1, "
               "gradient checkpointing by default, buckets <= 768, image) and 0 bytes free: E."))

# 2. torch 2.1 'total capacty', torch.cuda.OutOfMemoryError, model load of Qwen-Image without
#    low_vram, buckets up to 1024 -> A, model_load, low_vram.
j = job("qwen_poster_style", "qwen_image", low_vram=False)
case("a-torch21-capacty-model-load", j,
     echo(j) + ["Loading Qwen Image model", "Loading transformer"]
     + other_bars("Loading checkpoint shards", 0, 4, 9)
     + ejr_box(oom_21()) + tb(F_LOAD, "torch.cuda.OutOfMemoryError: " + oom_21()),
     exp(True, "before_training", "model_load", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate", "zero_bytes_free"], "image", ["low_vram"],
         notes="torch 2.1 wording ('total capacty', class torch.cuda.OutOfMemoryError). 0 bytes free "
               "but largest bucket 1024: not conservative, so A in model_load, low_vram first."))

# 3. ROCm: torch.OutOfMemoryError with 'HIP out of memory' in a periodic sample (uncaught).
j = job("zimage_rocm_inks", "zimage:turbo", res=(512, 768), sw=1280, sh=1280, steps=2000)
case("c-rocm-hip-sampling", j,
     echo(j) + load_msgs("ZImage") + LORA + dataset(ROOT + "/datasets/zimage_rocm_inks", 768)
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 2, 2)
     + ui_bars("zimage_rocm_inks", 0, 250, 2000)
     + ["", "Saving at step 250", "Saved checkpoint to %s/output/zimage_rocm_inks/zimage_rocm_inks_000000250.safetensors" % ROOT]
     + other_bars("Generating Samples", 0, 1, 2)
     + ejr_box(oom_new("4.00 GiB", "2.01 GiB", "23.98 GiB", 87, word="HIP"))
     + tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("4.00 GiB", "2.01 GiB", "23.98 GiB", 87, word="HIP")),
     exp(True, "sampling", "sampling", 250, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="ROCm card: 'HIP out of memory' counts as cuda_oom (SPEC 3.1). Baseline sample at "
               "1280 survived, training to 250, save ok, periodic sample OOMs: C at 250."))

# 4. ROCm asynchronous 'HIP error: out of memory' in training step 7 (not caught by the guard).
j = job("sd35_hip_logo", "sd3", res=(512, 768), batch=2, steps=1500, ui=False,
        model_extra={"is_v3": True})
del j["config"]["process"][0]["model"]["arch"]
case("b-rocm-hip-error-step-7", j,
     echo(j) + ["Loading SD3 model", "Loading transformer", "Quantizing transformer", "Loading vae",
                "Loading t5", "Quantizing T5"] + LORA
     + dataset(ROOT + "/datasets/sd35_hip_logo", 768, joined=True)
     + ["Skipping first sample due to config setting",
        cr_bars("sd35_hip_logo", 0, 6, 1500) + "Error running job: HIP error: out of memory"]
     + ["HIP kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect.", "For debugging consider passing AMD_SERIALIZE_KERNEL=3",
        "Compile with `TORCH_USE_HIP_DSA` to enable device-side assertions.", ""]
     + ejr_box("x")[2:] + tb(F_TRAIN, "RuntimeError: HIP error: out of memory")
     + ["HIP kernel errors might be asynchronously reported at some other API call, so the "
        "stacktrace below might be incorrect."],
     exp(True, "first_steps", "training", 7, ["cuda_error_oom"], "image", ["batch_size"],
         notes="Legacy is_v3 job (batch 2). The ROCm asynchronous 'HIP error: out of memory' is not "
               "caught by the OOM guard (no 'CUDA out of memory'), so it kills step 7 (bar shows 6): "
               "B. Gradient checkpointing is on by default, so the first plan step not done is batch_size."))

# 5. cuDNN CUDNN_STATUS_NOT_ENOUGH_MEMORY while caching video latents: NOT a SPEC 3.1 signature.
j = job("wan22_dance_clips", "wan22_14b:t2v", res=(512,), frames=33, low_vram=True, sw=832, sh=480,
        sframes=33)
case("cudnn-not-a-signature", j,
     echo(j) + ["Loading transformer 1", "Quantizing Transformer 1", "Moving transformer 1 to CPU",
                "Loading transformer 2", "Quantizing Transformer 2", "Moving transformer 2 to CPU",
                "Creating DualWanTransformer3DModel", "Loading UMT5EncoderModel", "Loading VAE"] + LORA
     + dataset(ROOT + "/datasets/wan22_dance_clips", 512, video=True)[:-1]
     + other_bars("Caching latents to disk", 0, 5, 24)
     + ejr_box("cuDNN error: CUDNN_STATUS_NOT_ENOUGH_MEMORY")
     + tb(F_CACHE + [(PKG + "/torch/nn/modules/conv.py", 720, "_conv_forward", "return F.conv3d(")],
          "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_ENOUGH_MEMORY"),
     exp(False, None, None, None, [], "video", [], other="python_error",
         notes="SPEC 3.1 lists CUBLAS_STATUS_ALLOC_FAILED but not cuDNN's NOT_ENOUGH_MEMORY, and the "
               "table is the law: no GPU OOM signature, the run died of a RuntimeError -> "
               "python_error. oomfix shows it as a hint (cuDNN could not get workspace memory)."))

# 6/7. CUBLAS_STATUS_ALLOC_FAILED in cublasCreate while quantizing (model load).
F_CUBLAS_LOAD = F_LOAD[:1] + [("toolkit/models/base_model.py", 436, "load_model",
                                "quantize_model(self, self.transformer)"),
                               ("toolkit/util/quantize.py", 460, "quantize_model",
                                "block.to(self.device_torch)")]
for nm, res, batch, want, timing, note in (
        ("e-cublas-model-load-conservative", (512, 768), 1, ["fresh_worker"], "environment",
         "Conservative job (batch 1, GC on, buckets <= 768): A + cublas_alloc_failed -> E."),
        ("a-cublas-model-load-not-conservative", (768, 1024), 1, ["low_vram"], "before_training",
         "Same failure, but bucket 1024 makes the job not conservative: A in model_load, low_vram.")):
    j = job(nm.replace("-", "_"), "flux2_klein_9b", res=res, batch=batch, steps=2000)
    case(nm, j,
         echo(j) + ["Loading Flux2 model", "Loading transformer", "Quantizing Transformer",
                    " - quantizing 24 transformer blocks"] + other_bars("", 0, 3, 24)
         + ejr_box(CUBLAS) + tb(F_CUBLAS_LOAD, "RuntimeError: " + CUBLAS),
         exp(True, timing, "model_load", None, ["cublas_alloc_failed"], "image", want, notes=note))

# 8. OOM while quantizing transformer blocks (bar without a description), terminal capture.
j = job("wan22_t2v_rain", "wan22_14b:t2v", res=(512,), frames=17, low_vram=False, sw=832, sh=480,
        sframes=33, ui=False)
case("a-quantizing-blocks", j,
     echo(j) + ["Loading transformer 1",
                other_bars("Loading checkpoint shards", 0, 6, 6, joined=True),
                "Quantizing Transformer 1", " - quantizing 40 transformer blocks",
                other_bars("", 0, 17, 40, joined=True) + "Error running job: " + oom_new("270.00 MiB", "101.44 MiB")]
     + ejr_box("x")[1:] + tb(F_QUANT, "torch.OutOfMemoryError: " + oom_new("270.00 MiB", "101.44 MiB")),
     exp(True, "before_training", "model_load", None, OOM3, "video", ["low_vram"],
         notes="Block-wise quantizer bar has no description; the message is glued to its frame. "
               "Traceback frames quantize_model/quantize confirm model load: A, low_vram."))

# 9. OOM while caching text embeddings (Qwen-Image, cache_text_embeddings).
j = job("qwen_te_cache", "qwen_image", low_vram=True, train_extra={"cache_text_embeddings": True})
case("a-text-embedding-cache", j,
     echo(j) + load_msgs("Qwen Image") + LORA + dataset(ROOT + "/datasets/qwen_te_cache", 1024)
     + ["Caching text_embeddings for " + ROOT + "/datasets/qwen_te_cache",
        " - Saving text embeddings to disk"] + other_bars("Caching text embeddings to disk", 0, 2, 24)
     + ejr_box(oom_new("1.12 GiB", "640.00 MiB", pid=311)) + tb(F_TE, "torch.OutOfMemoryError: " + oom_new("1.12 GiB", "640.00 MiB", pid=311)),
     exp(True, "before_training", "caching", None, OOM3, "image", ["drop_largest_bucket"],
         notes="Text-embedding caching is the caching phase (SPEC 3.2): A in caching, image -> "
               "drop_largest_bucket (SPEC 3.4), although quantize_te would also help."))

# 10. OOM while moving the text encoder off the GPU (unload_text_encoder).
j = job("flux_unload_te", "flux", res=(768, 1024), quantize=True, ui=False,
        train_extra={"unload_text_encoder": True})
case("a-unloading-text-encoder", j,
     echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/flux_unload_te", 1024, joined=True)
     + ["Caching embeddings and unloading text encoder", "", "***** UNLOADING TEXT ENCODER *****",
        "This will train only with a blank prompt or trigger word, if set",
        "If this is not what you want, remove the unload_text_encoder flag"]
     + ejr_box(oom_new("64.00 MiB", "12.19 MiB")) + tb(F_UNLOAD, "torch.OutOfMemoryError: " + oom_new("64.00 MiB", "12.19 MiB")),
     exp(True, "before_training", "caching", None, OOM3, "image", ["drop_largest_bucket"],
         notes="Unloading the text encoder happens before the first step, after the caching marker "
               "'Caching embeddings and unloading text encoder': A in caching -> drop_largest_bucket."))

# 11. Video latent caching of 81-frame clips (Wan 2.1 I2V) -> num_frames.
j = job("wan21_i2v_waves", "wan21_i2v:14b480p", res=(480,), frames=81, low_vram=True, sw=832,
        sh=480, sframes=41)
case("a-video-latent-cache", j,
     echo(j) + load_msgs("wan") + LORA + dataset(ROOT + "/datasets/wan21_i2v_waves", 480, video=True, n=12)[:-1]
     + other_bars("Caching latents to disk", 0, 1, 12)
     + ejr_box(oom_new("9.84 GiB", "3.02 GiB")) + tb(F_CACHE, "torch.OutOfMemoryError: " + oom_new("9.84 GiB", "3.02 GiB")),
     exp(True, "before_training", "caching", None, OOM3, "video", ["num_frames"],
         notes="VAE encode of 81-frame clips while caching latents: A in caching, video -> num_frames."))

# 12. OOM in the final save (bar at total, no 'Saving at step' line for the final save).
j = job("chroma_final_save", "chroma", steps=1200, quantize=True)
case("d-final-save", j,
     echo(j) + load_msgs("Chroma") + LORA + dataset(ROOT + "/datasets/chroma_final_save", 1024)
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 2, 2)
     + ui_bars("chroma_final_save", 0, 1200, 1200)
     + ejr_box(oom_new("512.00 MiB", "201.00 MiB")) + tb(F_SAVE, "torch.OutOfMemoryError: " + oom_new("512.00 MiB", "201.00 MiB")),
     exp(True, "intermittent", "saving", 1200, OOM3, "image", ["drop_largest_bucket"],
         notes="The final save after the bar reached 1200/1200 (traceback frame 'in save'). Saving is "
               "inside training after step 10, so the rules give D (same decision as a periodic save): "
               "failed_step = the step being saved, first fix drop_largest_bucket."))

# 13. A periodic sample at the last step (N = total).
j = job("flux_kontext_sketch", "flux_kontext", res=(512, 768), steps=1500,
        ds_extra={"control_path": ROOT + "/datasets/flux_kontext_sketch_ctrl"})
case("c-sample-at-last-step", j,
     echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/flux_kontext_sketch", 768)
     + ["Skipping first sample due to config setting"] + ui_bars("flux_kontext_sketch", 1490, 1500, 1500)
     + ["Saved checkpoint to %s/output/flux_kontext_sketch/flux_kontext_sketch.safetensors" % ROOT]
     + other_bars("Generating Images", 0, 1, 2)
     + ejr_box(oom_new()) + tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new()),
     exp(True, "sampling", "sampling", 1500, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="The final sample round after the final save: the bar shows 1500/1500, so C at 1500."))

# 14. Baseline sample from a first_sample section.
j = job("flux2_product_shots", "flux2", res=(512, 768), low_vram=True, sw=1024, sh=1024,
        proc_extra={"first_sample": {"width": 1536, "height": 1536, "sample_steps": 30}})
case("a-first-sample-config", j,
     echo(j) + load_msgs("Flux2") + LORA + dataset(ROOT + "/datasets/flux2_product_shots", 768)
     + ["Generating first sample from first sample config"] + other_bars("Generating Samples", 0, 0, 2)
     + other_bars("", 0, 30, 30)
     + ejr_box(oom_new("6.75 GiB", "4.10 GiB")) + tb(F_BASELINE, "torch.OutOfMemoryError: " + oom_new("6.75 GiB", "4.10 GiB")),
     exp(True, "before_training", "baseline_sampling", None, OOM3, "image",
         ["lighter_sampling", "disable_sampling"],
         notes="'Generating first sample from first sample config' is the baseline sample; the "
               "diffusers inner bar (no description) finishes, the decode OOMs: A, baseline_sampling."))

# 15. Wan 2.2 sampling with the inner diffusers bar, script(1) capture (CRLF, ANSI, ESC[A).
j = job("wan22_ink_motion", "wan22_14b:t2v", res=(512,), frames=17, low_vram=True, sw=832, sh=480,
        sframes=81, steps=2000, ui=False)
N = "wan22_ink_motion"
lines = echo(j) + ["Loading transformer 1", "Quantizing Transformer 1", "Moving transformer 1 to CPU",
                   "Loading transformer 2", "Quantizing Transformer 2", "Moving transformer 2 to CPU",
                   "Creating DualWanTransformer3DModel", "Loading VAE"] + LORA
lines += dataset(ROOT + "/datasets/wan22_ink_motion", 512, video=True, joined=True)
lines += ["Skipping first sample due to config setting",
          "\x1b[32m" + cr_bars(N, 0, 250, 2000) + "\x1b[0m", "", "Saving at step 250",
          "Saved checkpoint to out/wan22_ink_motion/wan22_ink_motion_000000250.safetensors",
          "\rGenerating Samples:   0%|          | 0/2 [00:00<?, ?it/s]\n"
          + "".join("\r" + webbar("", n, 40) + "\x1b[A" for n in range(0, 41))]
lines += ["\x1b[1;31m" + l + "\x1b[0m" for l in ejr_box(oom_new("11.25 GiB", "5.60 GiB", pid=5012))]
lines += tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("11.25 GiB", "5.60 GiB", pid=5012))
case("c-wan22-inner-bar-script", j, None,
     exp(True, "sampling", "sampling", 250, OOM3, "video", ["lighter_sampling", "disable_sampling"],
         notes="script(1) typescript: CRLF, colour and ESC[A from the nested inner diffusers bar "
               "under 'Generating Samples'. All 40 denoising steps pass, the decode of 81 frames OOMs: C at 250."),
     raw=("\r\n".join(lines) + "\r\n").encode())

# 16. Resumed run dying at step 1502.
j = job("chroma_resume_ink", "chroma", steps=3000)
case("d-resumed-1502", j,
     echo(j) + ["#### IMPORTANT RESUMING FROM %s/output/chroma_resume_ink/chroma_resume_ink_000001500.safetensors ####" % ROOT,
                "Found step 1500 in metadata, starting from there"] + load_msgs("Chroma") + LORA
     + dataset(ROOT + "/datasets/chroma_resume_ink", 1024) + ui_bars("chroma_resume_ink", 1500, 1501, 3000)
     + ejr_box("CUDA error: out of memory") + ASYNC_TAIL
     + tb(F_TRAIN, "torch.AcceleratorError: CUDA error: out of memory") + ASYNC_TAIL[:3],
     exp(True, "intermittent", "training", 1502, ["cuda_error_oom"], "image", ["drop_largest_bucket"],
         notes="Resumed at 1500 (no baseline sample); the bar starts at 1500/3000, step 1501 passes, "
               "the asynchronous CUDA error kills step 1502: D."))

# 17. Two runs appended: the first finished, the second died in its baseline sample.
j = job("sdxl_two_runs", "sdxl", res=(512, 1024), quantize=False, ui=False, steps=100, sw=1536, sh=1536)
run1 = echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA + dataset(ROOT + "/datasets/sdxl_two_runs", 1024, joined=True)
run1 += ["Skipping first sample due to config setting", cr_bars("sdxl_two_runs", 0, 100, 100),
         "Saved checkpoint to out/sdxl_two_runs/sdxl_two_runs.safetensors"]
run2 = echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA + dataset(ROOT + "/datasets/sdxl_two_runs", 1024, joined=True)
run2 += ["Generating baseline samples before training", other_bars("Generating Images", 0, 0, 2, joined=True)
         + "Error running job: " + oom_new("4.50 GiB", "3.10 GiB")] + ejr_box("x")[1:] + tb(F_BASELINE, "torch.OutOfMemoryError: " + oom_new("4.50 GiB", "3.10 GiB"))
case("two-runs-ok-then-oom", j, run1 + run2,
     exp(True, "before_training", "baseline_sampling", None, OOM3, "image",
         ["lighter_sampling", "disable_sampling"],
         notes="The same log file kept across two runs: the first completed (bar 100/100 from the "
               "previous run must not count as training started), the second died in the baseline sample."))

# 18. Two runs: the first killed by the host OOM killer, the second OOMs while sampling.
j = job("ltx2_city_night", "ltx2", res=(512,), frames=49, low_vram=True, sw=768, sh=512, sframes=121, steps=2000)
N = "ltx2_city_night"
run1 = echo(j) + ["Loading LTX2 model", "Loading transformer",
                  other_bars("Loading checkpoint shards", 0, 2, 4, joined=True) + "Running 1 job"]
run2 = echo(j)[1:]
run2 += load_msgs("LTX2") + LORA + dataset(ROOT + "/datasets/ltx2_city_night", 512, video=True)
run2 += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 250, 2000) + [
    "", "Saving at step 250", "Saved checkpoint to %s/output/%s/%s_000000250.safetensors" % (ROOT, N, N)]
run2 += other_bars("Generating Samples", 0, 0, 1) + other_bars("", 0, 30, 30)
run2 += ejr_box(oom_new("7.03 GiB", "6.40 GiB")) + tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("7.03 GiB", "6.40 GiB"))
case("two-runs-killed-then-sampling", j, run1 + run2,
     exp(True, "sampling", "sampling", 250, OOM3, "video", ["lighter_sampling", "disable_sampling"],
         notes="First run killed while loading shards (the -l file just stops mid-bar, no newline); "
               "the retry's 'Running 1 job' is glued to that frame. The retry trains to 250 and dies "
               "sampling 121-frame video: C."))

# 19. stderr only: no trainer messages, only download/shard bars and the traceback.
j = job("hidream_stderr_only", "hidream", res=(1024,), low_vram=False)
case("a-stderr-only-model-load", j,
     other_bars("Fetching 4 files", 0, 4, 4) + other_bars("Loading checkpoint shards", 0, 3, 4)
     + tb(F_LOAD, "torch.OutOfMemoryError: " + oom_new("1.32 GiB", "1.01 GiB")),
     exp(True, "before_training", "model_load", None, OOM3, "image", ["low_vram"],
         notes="2> capture: stdout (messages, echo, Error running job) went elsewhere. Shard bars "
               "and the load_model frame put it in model load: A."))

# 20. stderr only, training and sampling bars then the traceback.
j = job("lumina_stderr_sample", "lumina2", res=(512, 768), quantize=False, steps=1000)
N = "lumina_stderr_sample"
case("c-stderr-only-sampling", j,
     [other_bars("Caching latents to disk", 0, 24, 24, joined=True),
      other_bars("Generating Images", 0, 2, 2, joined=True), cr_bars(N, 0, 500, 1000),
      other_bars("Generating Images", 0, 1, 2, joined=True)]
     + tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("3.00 GiB", "2.02 GiB")),
     exp(True, "sampling", "sampling", 500, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="stderr only: the baseline sample bar, training to 500, then the sampling bar and the "
               "traceback. No 'Saving' or 'Generating' messages (stdout): C at 500."))

# 21. Job name with spaces and regex metacharacters; skips then abort at step 9.
NAME = "my lora (v2) [test]"
j = job(NAME, "flux", res=(512, 768, 1024), quantize=True, steps=2000)
lines = echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/my_lora", 1024)
lines += ["Skipping first sample due to config setting"] + ui_bars(NAME, 0, 5, 2000)
for k in (1, 2, 3):
    lines += skip(k) + [tframe(NAME, 5 + k, 2000)]
lines += ejr_box(ABORT) + tb(F_TRAIN[:1], "RuntimeError: " + ABORT)
case("b-name-with-metachars", j, lines,
     exp(True, "first_steps", "training", 9, ["oom_abort", "oom_skip"], "image",
         ["drop_largest_bucket"],
         notes="Bar description 'my lora (v2) [test]' (spaces, brackets, parentheses). Steps 1-5 pass, "
               "6-8 are skipped, the 4th OOM (step 9, bar shows 8) aborts: B. Gradient checkpointing on "
               "by default and batch 1, so the first plan step not done is drop_largest_bucket."))

# 22. A log still being written: a survived skip, the last line cut mid-frame.
j = job("sdxl_growing", "sdxl", res=(512, 768, 1024), quantize=False, steps=3000)
N = "sdxl_growing"
lines = echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA + dataset(ROOT + "/datasets/sdxl_growing", 1024)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 600, 619, 3000) + skip(1) + ui_bars(N, 620, 700, 3000)
data = ("\n".join(lines) + "\n" + tframe(N, 701, 3000)[:30]).encode()
case("d-growing-log-cut-mid-line", j, None,
     exp(True, "intermittent", "training", 620, ["oom_skip"], "image", ["drop_largest_bucket"],
         notes="Still running: a skip at step 620 was survived, the last frame is cut mid-line (no "
               "newline). OOM skips that the run survived: D, failed_step = the skipped step."),
     raw=data)

# 23. Every line twice (stderr duplicated by two handlers), web UI, skips then abort at step 6.
j = job("flex2_dup_lines", "flex2", res=(512, 768), gc=False, steps=2500)
N = "flex2_dup_lines"
lines = echo(j) + load_msgs("Flex2") + LORA + dataset(ROOT + "/datasets/flex2_dup_lines", 768)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 2, 2500)
for k in (1, 2, 3):
    lines += skip(k) + [tframe(N, 2 + k, 2500)]
lines += ejr_box(ABORT) + tb(F_TRAIN[:1], "RuntimeError: " + ABORT)
case("b-every-line-twice", j, [x for l in lines for x in (l, l)],
     exp(True, "first_steps", "training", 6, ["oom_abort", "oom_skip"], "image",
         ["gradient_checkpointing"], counts={"oom_abort": 1},
         notes="Every physical line appears twice (bars, banners, the error). Steps 3-5 skipped, "
               "abort at step 6 (bar shows 5): B, gradient_checkpointing is explicitly false."))

# 24. A 200k-frame \r line (stored gzipped), then the error.
j = job("tiny_long_bar", "sd1", res=(512, 768), quantize=False, ui=False, steps=200000)
N = "tiny_long_bar"
big = ("\n".join(echo(j) + ["Preparing Model"] + LORA) + "\n").encode()
big += "".join("\r" + webbar(N, n, 200000, ", lr: 1.0e-04 loss: 1.234e-01") for n in range(0, 200000)).encode()
big += ("Error running job: " + oom_new() + "\n").encode()
big += ("\n".join(ejr_box("x")[1:] + tb(F_TRAIN, "torch.OutOfMemoryError: " + oom_new())) + "\n").encode()
case("d-200k-frames-one-line", j, None,
     exp(True, "intermittent", "training", 200000, OOM3, "image", ["drop_largest_bucket"],
         generated_log=True,
         notes="One physical line of 200 000 training-bar frames (last shows 199999), the error glued "
               "to it: D at step 200000. 17 MB, so it is not committed: the runner writes it with "
               "make_cases_archs_captures.py --log."),
     raw=big, gz=True)

# 25. Decoys in the config echo: an abort message as a prompt, a folder cuda_out_of_memory_examples.
F = ROOT + "/datasets/cuda_out_of_memory_examples"
j = job("decoy_prompts", "qwen_image", res=(512, 768), low_vram=True, steps=300, folder=F,
        prompts=("a banner reading OOM during training step 3 times in a row",
                 "torch.OutOfMemoryError printed on a mug", "CUDA error: out of memory, glitch art"))
N = "decoy_prompts"
case("decoy-prompts-successful-run", j,
     echo(j) + load_msgs("Qwen Image") + LORA + dataset(F, 768)
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 3, 3)
     + ui_bars(N, 0, 300, 300)
     + ["Saved checkpoint to %s/output/%s/%s.safetensors" % (ROOT, N, N)] + other_bars("Generating Samples", 0, 3, 3),
     exp(False, None, None, None, [], "image", [],
         notes="OOM wording only in the JSON echo (prompts) and in a folder name that is printed by "
               "'Dataset:' and 'Caching latents for'. The run completes: no failure at all."))

# 26. A wrapper that dumps its environment and cats the job YAML before running.
j = job("wrapper_env_dump", "flux", res=(512, 768), quantize=True, steps=200,
        prompts=("a chalkboard: CUDA out of memory. Tried to allocate 2.00 GiB",
                 "OOM during training step, skipping batch 1/3"))
N = "wrapper_env_dump"
yaml_echo = job_yaml(j).rstrip("\n").split("\n")
yaml_echo.insert(3, "  # was batch 4: torch.OutOfMemoryError, Killed process")
case("decoy-env-and-yaml-dump", j,
     ["== environment ==", "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True", "CUDA_VISIBLE_DEVICES=0",
      "HF_HOME=/workspace/hf", "== run =="]
     + echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/CUDA out of memory repros", 768)
     + ["Skipping first sample due to config setting"] + ui_bars(N, 0, 200, 200)
     + ["Saved checkpoint to out/%s/%s.safetensors" % (N, N), "== job.yaml (for the record) =="]
     + yaml_echo + ["== exit status 0 =="],
     exp(False, None, None, None, [], "image", [],
         notes="The wrapper prints PYTORCH_CUDA_ALLOC_CONF first and the YAML itself after the run "
               "(prompts with OOM words as list items, a comment with torch.OutOfMemoryError); the "
               "dataset folder 'CUDA out of memory repros' is printed by 'Dataset:' and 'Caching latents "
               "for'. Config and paths, not error output."))

# 27. A non-fatal UserWarning that mentions out of memory, then a completed run.
j = job("sdxl_vae_warning", "sdxl", res=(512, 768), quantize=False, ui=False, steps=300)
N = "sdxl_vae_warning"
case("decoy-userwarning-not-fatal", j,
     echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA + dataset(ROOT + "/datasets/sdxl_vae_warning", 768, joined=True)
     + ["Generating baseline samples before training",
        PKG + "/diffusers/models/autoencoders/vae.py:412: UserWarning: CUDA out of memory while "
        "decoding without tiling, retrying with tiled decode", "  warnings.warn(",
        other_bars("Generating Images", 0, 2, 2, joined=True), cr_bars(N, 0, 300, 300),
        "Saved checkpoint to out/%s/%s.safetensors" % (N, N)],
     exp(False, None, None, None, [], "image", [],
         notes="A Python warning (file:line: UserWarning: ...) is the library saying it coped: not "
               "error output, and the run went on to finish. Decision: warnings are not signatures."))

# 28. The user pressed Stop in the web UI.
j = job("zimage_stopped", "zimage:turbo", res=(512, 768), steps=3000)
N = "zimage_stopped"
case("job-stopped-by-user", j,
     echo(j) + load_msgs("ZImage") + LORA + dataset(ROOT + "/datasets/zimage_stopped", 768)
     + ["Skipping first sample due to config setting"] + ui_bars(N, 0, 40, 3000)
     + ["========================================", "Job stopped", "========================================"],
     exp(False, None, None, None, [], "image", [],
         notes="The trainer's own 'Job stopped' after the Stop button: not a failure, no OOM."))

# 29. OSError for a gated repository (huggingface, no GatedRepoError line).
j = job("flux_gated", "flux", res=(512, 768), ui=False)
case("hf-gated-oserror", j,
     echo(j) + ["Loading Flux model", "Loading transformer"]
     + ejr_box("You are trying to access a gated repo.")
     + tb([("toolkit/stable_diffusion_model.py", 668, "load_model",
            "transformer = FluxTransformer2DModel.from_pretrained(")],
          "OSError: You are trying to access a gated repo.")
     + ["Make sure to have access to it at https://huggingface.co/black-forest-labs/FLUX.1-dev.",
        "Cannot access gated repo for url https://huggingface.co/black-forest-labs/FLUX.1-dev/resolve/main/transformer/config.json."],
     exp(False, None, None, None, [], "image", [], other="hf_auth",
         notes="transformers' OSError for a gated repo (the token has not accepted the licence)."))

# 30. ${HF_TOKEN} placeholder in the job, variable not set: a configuration error.
j = job("flux_env_token", "flux", res=(512, 768), ui=False)
case("config-env-var-not-set", j,
     ["Traceback (most recent call last):", '  File "%s/run.py", line 90, in <module>' % ROOT,
      "    main()", '  File "%s/run.py", line 72, in main' % ROOT,
      "    job = get_job(config_file, args.name)",
      '  File "%s/toolkit/config.py", line 41, in replace_env_vars_in_string' % ROOT,
      "    raise ValueError(f\"Environment variable {var_name} not set\")",
      "ValueError: Environment variable HF_TOKEN not set"],
     exp(False, None, None, None, [], "image", [], other="config_error",
         notes="The ${VAR} substitution of the config loader failed before the job ran. Whatever "
               "the variable's name, the job file could not be read: config_error (not hf_auth)."))

# 31. gradient_accumulation and gradient_accumulation_steps both set.
j = job("flux_both_accum", "flux", res=(512, 768), ui=False,
        train_extra={"gradient_accumulation": 2, "gradient_accumulation_steps": 4})
case("config-accumulation-exclusive", j,
     echo(j) + ["Error running job: gradient_accumulation and gradient_accumulation_steps are mutually exclusive"]
     + ejr_box("x")[1:] + tb([("jobs/process/BaseSDTrainProcess.py", 105, "__init__",
                               "self.train_config = TrainConfig(**self.get_conf('train', {}))"),
                              ("toolkit/config_modules.py", 463, "__init__",
                               "raise ValueError(\"gradient_accumulation and gradient_accumulation_steps are mutually exclusive\")")],
                             "ValueError: gradient_accumulation and gradient_accumulation_steps are mutually exclusive"),
     exp(False, None, None, None, [], "image", [], other="config_error"))

# 32. NCCL failure printed by torch.distributed with [rankN]: prefixes.
j = job("flux_two_gpu", "flux", res=(512, 768), ui=False)
lines = echo(j) + ["Loading Flux model", "Loading transformer"]
err = tb([("toolkit/stable_diffusion_model.py", 700, "load_model", "self.accelerator.wait_for_everyone()")],
         "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:268, "
         "unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5")
err += ["ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error.",
        "Last error:", "socketStartConnect: Connect to 10.0.0.2<45231> failed : Software caused connection abort"]
lines += ["[rank0]: " + l for l in err]
lines += ["E0602 10:14:03.412000 4051 torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: 0 (pid: 4051) of binary: /usr/bin/python3",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "]
case("nccl-rank-prefixed", j, lines,
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="torchrun prefixes every traceback line with '[rank0]: '; the NCCL error is a Python "
               "error, not memory."))

# 33. KeyboardInterrupt: the user pressed Ctrl-C in the terminal.
j = job("sdxl_ctrl_c", "sdxl", res=(512, 768), quantize=False, ui=False, steps=1000)
N = "sdxl_ctrl_c"
case("keyboard-interrupt", j,
     echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA
     + [cr_bars(N, 0, 12, 1000) + "^C"] + tb(F_TRAIN[:2], "KeyboardInterrupt"),
     exp(False, None, None, None, [], "image", [],
         notes="Ctrl-C: the user ended the run. Not a failure of the job, so other_failure is null "
               "(no Python error to chase)."))

# 34. Docker logs with --timestamps: every physical line starts with an RFC 3339 time.
j = job("ltx23_docker", "ltx2.3", res=(512, 768), frames=65, low_vram=True, sw=768, sh=512, sframes=65, steps=3000)
N = "ltx23_docker"
lines = echo(j) + load_msgs("LTX2") + LORA + dataset(ROOT + "/datasets/ltx23_docker", 768, video=True)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 1, 3000)
for k in (1, 2, 3):
    lines += skip(k) + [tframe(N, 1 + k, 3000)]
lines += ejr_box(ABORT) + tb(F_TRAIN[:1], "RuntimeError: " + ABORT)
case("b-docker-timestamps", j,
     ["2025-06-02T10:%02d:%02d.%09dZ %s" % (i // 60 % 60, i % 60, i * 7919 % 1000000000, l) for i, l in enumerate(lines)],
     exp(True, "first_steps", "training", 5, ["oom_abort", "oom_skip"], "video", ["num_frames"],
         notes="`docker logs --timestamps`: every line starts with a timestamp (the trainer's markers, "
               "bars and the traceback too). Step 1 passes, 2-4 skipped, abort at 5: B, video -> num_frames."))

# 35. torch.OutOfMemoryError without the 'CUDA out of memory' text (allocation on device).
j = job("hidream_e1_edit", "hidream_e1", res=(512, 768), low_vram=True, sw=1024, sh=1024)
case("a-torch-oom-only-baseline", j,
     echo(j) + load_msgs("HiDream E1") + LORA + dataset(ROOT + "/datasets/hidream_e1_edit", 768)
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 0, 4)
     + ejr_box("Allocation on device ") + tb(F_BASELINE, "torch.OutOfMemoryError: Allocation on device "),
     exp(True, "before_training", "baseline_sampling", None, ["allocation_on_device", "torch_oom"],
         "image", ["lighter_sampling", "disable_sampling"],
         notes="torch.OutOfMemoryError with the short 'Allocation on device' text: torch_oom, and "
               "the bare text is itself a signature (SPEC 3.6, ComfyUI prints it alone)."))

# 36. 0 bytes free in the baseline sample of a conservative video job, another process holds memory.
j = job("wan21_small_clips", "wan21:1b", res=(480,), frames=33, low_vram=False, sw=832, sh=480, sframes=33)
case("e-baseline-zero-free-other-process", j,
     echo(j) + load_msgs("wan") + LORA + dataset(ROOT + "/datasets/wan21_small_clips", 480, video=True)
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 0, 2)
     + ejr_box(oom_new("20.00 MiB", "0 bytes", "11.72 GiB", pid=2980))
     + tb(F_BASELINE, "torch.OutOfMemoryError: " + oom_new("20.00 MiB", "0 bytes", "11.72 GiB", pid=2980)),
     exp(True, "environment", "baseline_sampling", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate", "zero_bytes_free"], "video", ["fresh_worker"],
         notes="Wan 2.1 1.3B, 33-frame clips at 480, batch 1, GC on: conservative. 0 bytes free in the "
               "first baseline sample and 'Process 2980 has ...' (another process): E."))

# 37. Async CUDA error at step 2 of a non-conservative video job.
j = job("wan22_5b_long", "wan22_5b", res=(768,), frames=121, low_vram=True, sw=768, sh=768, sframes=121)
N = "wan22_5b_long"
case("b-video-async-step-2", j,
     echo(j) + ["Loading Wan2.2 5B model", "Loading transformer", "Loading VAE", "Model Loaded"] + LORA
     + dataset(ROOT + "/datasets/wan22_5b_long", 768, video=True)
     + ["Skipping first sample due to config setting"] + ui_bars(N, 0, 1, 3000)
     + ejr_box("CUDA error: out of memory") + ASYNC_TAIL
     + tb(F_TRAIN, "torch.AcceleratorError: CUDA error: out of memory") + ASYNC_TAIL[:3],
     exp(True, "first_steps", "training", 2, ["cuda_error_oom"], "video", ["num_frames"],
         notes="121-frame clips: step 1 passes, the asynchronous CUDA error (uncaught) kills step 2: B; "
               "video, first plan step num_frames."))

# 38. No job given: stderr-ish capture with a baseline bar, caching, an unnamed training bar.
case("d-no-job-unnamed-bar", None,
     [other_bars("Caching latents to disk", 0, 30, 30, joined=True),
      other_bars("Generating Samples", 0, 2, 2, joined=True) + "".join("\r" + webbar("", n, 20) for n in range(21)),
      cr_bars("run_2024_11", 0, 33, 2000)] + skip(1) + [cr_bars("run_2024_11", 34, 34, 2000)] + skip(2)
     + [cr_bars("run_2024_11", 35, 35, 2000)] + skip(3) + [cr_bars("run_2024_11", 36, 36, 2000)]
     + ["Error running job: " + ABORT] + tb(F_TRAIN[:1], "RuntimeError: " + ABORT),
     exp(True, "intermittent", "training", 37, ["oom_abort", "oom_skip"], None, ["drop_largest_bucket"],
         no_job=True,
         notes="No --job: the training bar is the one with lr:/loss: (its first frame has neither). "
               "Caching, baseline and inner bars before it move nothing. Abort at step 37: D."))

# 39. UI 'sample now' at a step that is not a multiple of sample_every.
j = job("krea2_sample_now", "krea2:turbo", res=(512, 768), low_vram=True, sw=1328, sh=1328, steps=3000)
N = "krea2_sample_now"
case("c-ui-sample-now", j,
     echo(j) + load_msgs("Krea2") + LORA + dataset(ROOT + "/datasets/krea2_sample_now", 768)
     + ["Skipping first sample due to config setting"] + ui_bars(N, 1200, 1234, 3000)
     + ["Sampling at step 1234"] + other_bars("Generating Samples", 0, 0, 10)
     + ejr_box(oom_new("5.06 GiB", "2.40 GiB")) + tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("5.06 GiB", "2.40 GiB")),
     exp(True, "sampling", "sampling", 1234, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="'Sampling at step 1234' from the UI's sample-now button: C at 1234."))

# 40. yaml.scanner.ScannerError: the job file itself is invalid, so no --job.
BAD = ("job: extension\nconfig:\n  name: \"flux_bad_yaml\"\n  process:\n    - type: sd_trainer\n"
       "      train:\n        batch_size: 1\n        lr: 1e-4\n      sample:\n"
       "        prompts:\n          - a cat: on a mat\n          \"a dog\"\n")
case("config-yaml-scanner", BAD,
     ["Traceback (most recent call last):", '  File "%s/run.py", line 90, in <module>' % ROOT, "    main()",
      '  File "%s/toolkit/config.py", line 88, in get_config' % ROOT,
      "    config = yaml.load(f, Loader=fixed_loader)",
      '  File "%s/yaml/scanner.py", line 577, in fetch_value' % PKG, "    raise ScannerError(None, None,",
      "yaml.scanner.ScannerError: mapping values are not allowed here",
      '  in "config/flux_bad_yaml.yaml", line 11, column 22'],
     exp(False, None, None, None, [], None, [], other="config_error", no_job=True,
         notes="The job file does not parse (oomfix cannot load it either, so no --job): config_error."))

# 41. [1]+ Killed (bash job control) during latent caching: host RAM.
j = job("sdxl_host_ram", "sdxl", res=(512, 768, 1024), quantize=False, ui=False)
case("host-oom-job-control", j,
     echo(j) + ["Loading SDXL model", "Preparing Model"] + LORA
     + dataset(ROOT + "/datasets/sdxl_host_ram", 1024, n=4000, joined=True)[:-1]
     + [other_bars("Caching latents to disk", 0, 1200, 4000, joined=True),
        "[1]+  Killed                  python run.py config/sdxl_host_ram.yaml 2>&1"],
     exp(False, None, None, None, [], "image", [], other="host_oom",
         notes="bash's job-control report '[1]+  Killed' after the log stops: host RAM, not the GPU."))

# 42. FileNotFoundError for a control image of an edit job.
j = job("kontext_missing_ctrl", "flux_kontext", res=(512, 768),
        ds_extra={"control_path": ROOT + "/datasets/kontext_missing_ctrl/control"})
N = "kontext_missing_ctrl"
case("missing-control-image", j,
     echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/kontext_missing_ctrl", 768)
     + ["Skipping first sample due to config setting"] + ui_bars(N, 0, 17, 3000)
     + ejr_box("[Errno 2] No such file or directory: '%s/datasets/kontext_missing_ctrl/control/img_0042.png'" % ROOT)
     + tb(F_TRAIN[:1] + [("toolkit/dataloader_mixins.py", 640, "load_control_image", "img = Image.open(self.control_path)")],
          "FileNotFoundError: [Errno 2] No such file or directory: '%s/datasets/kontext_missing_ctrl/control/img_0042.png'" % ROOT),
     exp(False, None, None, None, [], "image", [], other="missing_file"))


# 43. docker --timestamps on a non-OOM failure, with OOM words in the echo and a retry.
j = job("qwen_ts_retry", "qwen_image", res=(512, 768), low_vram=True, steps=1000,
        prompts=("a neon sign: CUDA out of memory", "OOM during training step 3 times in a row, a meme"))
N = "qwen_ts_retry"
lines = echo(j) + load_msgs("Qwen Image") + LORA + ["Loading Qwen Image model"]
lines += ejr_box(oom_new()) + tb(F_LOAD, "torch.OutOfMemoryError: " + oom_new())
lines += echo(j) + load_msgs("Qwen Image") + LORA + dataset(ROOT + "/datasets/qwen_ts_retry", 768)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 12, 1000)
lines += ejr_box("'NoneType' object is not subscriptable") + tb(F_TRAIN[:2], "TypeError: 'NoneType' object is not subscriptable")
case("docker-timestamps-retry-python-error", j,
     ["2025-06-03T08:%02d:%02d.%06d+00:00 %s" % (i // 60 % 60, i % 60, i * 31 % 1000000, l) for i, l in enumerate(lines)],
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="Timestamps on every line: the JSON echo (with OOM prompts), 'Running 1 job' and the "
               "traceback must still be recognised. The first run OOMed loading, the retry died of a "
               "TypeError at step 13: the last run decides."))

# 44. torchrun rank prefixes on a sampling OOM.
j = job("flux_rank_sample", "flux", res=(512, 768), steps=2000, ui=False)
N = "flux_rank_sample"
lines = echo(j) + load_msgs("flux") + LORA + dataset(ROOT + "/datasets/flux_rank_sample", 768, joined=True)
lines += ["Skipping first sample due to config setting", cr_bars(N, 0, 750, 2000), "", "Saving at step 750",
          "Saved checkpoint to out/%s/%s_000000750.safetensors" % (N, N),
          other_bars("Generating Images", 0, 1, 4, joined=True)]
lines += ["[rank0]: " + l for l in tb(F_SAMPLE, "torch.OutOfMemoryError: " + oom_new("3.16 GiB", "1.20 GiB", pid=7001))]
case("c-rank-prefixed-sampling", j, lines,
     exp(True, "sampling", "sampling", 750, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="Launched through torchrun: the traceback lines carry '[rank0]: '. Sampling at 750: C."))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "--log":
        with open(sys.argv[3], "wb") as f:  # a log too big to commit, written for one test run
            f.write(cases[sys.argv[2]][1])
        return
    write_cases(OUT, cases)


def write_cases(out, cases):
    """Writes each case's job.yaml, train.log (unless generated at test time) and expect.json."""
    os.makedirs(out, exist_ok=True)
    for name, (j, data, expect, gz) in sorted(cases.items()):
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        if j is not None:
            with open(os.path.join(d, "job.yaml"), "w") as f:
                f.write(j if isinstance(j, str) else job_yaml(j))
        if not gz:
            with open(os.path.join(d, "train.log"), "wb") as f:
                f.write(data)
        with open(os.path.join(d, "expect.json"), "w") as f:
            json.dump(expect, f, indent=2, sort_keys=True, ensure_ascii=False)
            f.write("\n")
    print("%d cases written to %s" % (len(cases), out), file=sys.stderr)


if __name__ == "__main__":
    main()
