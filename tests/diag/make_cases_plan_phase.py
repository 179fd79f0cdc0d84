#!/usr/bin/env python3
"""Writes the third set of diagnosis cases under tests/diag/cases-plan-phase/ (job.yaml, train.log and
expect.json each), run through `oomfix diagnose [--job JOB] --json` and `oomfix plan --json --log`.

The first two sets cover the common archs and captures. These cover what they left out:
* model classes: Qwen-Image (the web UI's low_vram default), Qwen-Image-Edit-Plus, FLUX.2 and
  Klein 4B, HiDream without quantization, SDXL and SD 1.5 (no quantization, `Generating Images`,
  no `Model Loaded`), Chroma, OmniGen2, Z-Image De-Turbo, Krea 2, LTX-2 / LTX-2.5 (8k+1 frames),
  Wan 2.1 I2V 480p, Wan 2.2 14B I2V, MiniMax H3, `is_flux` and `arch: flex1`;
* jobs with two or three datasets (a 121-frame video set beside an image set), per-dataset batch
  sizes, the legacy gradient_accumulation_steps, per-prompt sample sizes;
* the edges of the environment rule (SPEC §3.3 E): step 1 against step 2, one 768 bucket with
  1024 previews, cuBLAS in the baseline sample, accumulation, a per-dataset batch of 2;
* captures: the web UI (`Job ID`), a wrapper that stamps every line `[YYYY-MM-DD hh:mm:ss] `,
  `stdout | ` / `stderr | ` prefixes, a traceback written into the middle of a bar frame, a
  chained traceback (the caught OOM raised again as the abort), an OOM in optimizer.step, in
  encode_prompt while caching embeddings, in a validation pass, skips a run survived to the end,
  a run stopped after a skip;
* the same logs without --job ("no_job"): no model kind, and no E verdict, which needs the job.

expect.json holds the verdict worked out by hand from SPEC §3 before oomfix was run on it;
"notes" says why, and names the judgement where the SPEC leaves a choice. The logs are made up
but keep the trainer's own wording (aitk-reference §d). The helpers come from make_cases_archs_captures.py.

Run it again after changing a case and review the diff; the logs are committed.
"""
import copy
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases_archs_captures as m2  # noqa: E402  (its helpers: job, echo, bars, tracebacks, messages)

OUT = os.path.join(HERE, "cases-plan-phase")
ROOT, PKG = m2.ROOT, m2.PKG
job, job_yaml, echo, webbar, tframe = m2.job, m2.job_yaml, m2.echo, m2.webbar, m2.tframe
ui_bars, cr_bars, other_bars, dataset = m2.ui_bars, m2.cr_bars, m2.other_bars, m2.dataset
ejr_box, tb, skip, oom_new, LORA = m2.ejr_box, m2.tb, m2.skip, m2.oom_new, m2.LORA
ABORT, CUBLAS, ASYNC_TAIL, oom_old = m2.ABORT, m2.CUBLAS, m2.ASYNC_TAIL, m2.oom_old
F_TRAIN, F_SAMPLE, F_BASELINE, F_CACHE = m2.F_TRAIN, m2.F_SAMPLE, m2.F_BASELINE, m2.F_CACHE

OOM3 = ["cuda_oom", "torch_oom", "tried_to_allocate"]
OOM4 = OOM3 + ["zero_bytes_free"]

cases = {}


def case(name, j, log, expect, raw=None):
    data = raw if raw is not None else ("\n".join(log) + "\n").encode("utf-8", "surrogateescape")
    cases[name] = (j, data, expect)


def exp(oom, timing, phase, step, sigs, kind, fixes, other=None, notes="", **more):
    d = {"oom": oom, "timing": timing, "phase": phase, "failed_step": step,
         "signatures": sorted(sigs), "model_kind": kind,
         "first_fix": fixes[0] if fixes else None, "accept_first_fix": list(fixes),
         "other_failure": other, "notes": notes}
    d.update(more)
    return d


def no_job(src, name, fixes, notes, **more):
    """The same log diagnosed without --job: no model kind, no E (it needs the job)."""
    j, data, e = cases[src]
    e = dict(e, model_kind=None, first_fix=fixes[0], accept_first_fix=list(fixes), no_job=True,
             notes=notes)
    e.update(more)
    cases[name] = (None, data, e)


def proc(j):
    return j["config"]["process"][0]


def legacy_accum(j, steps):
    """A hand-written file with the old key instead of the UI's gradient_accumulation."""
    t = proc(j)["train"]
    t.pop("gradient_accumulation", None)
    t["gradient_accumulation_steps"] = steps


def stamped(lines, t0=0, fmt="[2026-11-30 12:%02d:%02d] "):
    """A wrapper that reads the trainer's output line by line and stamps each line."""
    return [fmt % ((t0 + i) // 60 % 60, (t0 + i) % 60) + l for i, l in enumerate(lines)]


def oom_incl(alloc, free, total="23.55 GiB", used="22.10 GiB"):
    # `used` is what the job holds: the card's other users are total - free - used (SPEC §3.6)
    return ("CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of which "
            "%s is free. Including non-PyTorch memory, this process has %s memory in use. "
            "Of the allocated memory 21.35 GiB is allocated by PyTorch, and 402.11 MiB is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  (https://docs.pytorch.org/docs/stable/notes/"
            "cuda.html#optimizing-memory-usage-with-pytorch-cuda-alloc-conf)" % (alloc, total, free, used))


def fatal(msg, frames, cls="torch.OutOfMemoryError"):
    return ejr_box(msg) + tb(frames, "%s: %s" % (cls, msg))


LEGACY_LOAD = "toolkit/stable_diffusion_model.py"
F_BACKWARD = F_TRAIN[:3] + [
    (PKG + "/accelerate/accelerator.py", 2473, "backward", "loss.backward(**kwargs)"),
    (PKG + "/torch/_tensor.py", 626, "backward", "torch.autograd.backward("),
    (PKG + "/torch/autograd/__init__.py", 347, "backward", "_engine_run_backward("),
    (PKG + "/torch/autograd/graph.py", 823, "_engine_run_backward",
     "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the "
     "backward pass")]
F_OPTIM = F_TRAIN[:2] + [
    ("extensions_built_in/sd_trainer/SDTrainer.py", 2290, "hook_train_loop",
     "self.optimizer.step()"),
    (PKG + "/accelerate/optimizer.py", 179, "step", "self.optimizer.step(closure)"),
    (PKG + "/torch/optim/optimizer.py", 493, "wrapper", "out = func(*args, **kwargs)"),
    (PKG + "/bitsandbytes/optim/optimizer.py", 291, "step", "self.init_state(group, p, gindex, pindex)"),
    (PKG + "/bitsandbytes/optim/optimizer.py", 470, "init_state",
     "state[\"state1\"] = self.get_state_buffer(p, dtype=torch.uint8)")]


def qwen_load(edit=False):
    return ["Loading Qwen Image%s model" % (" Edit Plus" if edit else ""), "Loading transformer",
            "Quantizing Transformer", "Moving transformer to CPU", "Text Encoder",
            "Quantizing Text Encoder", "Loading VAE", "Making pipe", "Preparing Model",
            "Model Loaded"]


WAN_LOAD = ["Loading Wan model", "Loading transformer", "Quantizing Transformer",
            "Moving transformer to CPU", "Loading UMT5EncoderModel", "Quantizing UMT5EncoderModel",
            "Moving transformer back to GPU", "Loading VAE", "Making pipe", "Preparing Model"]
WAN22_LOAD = ["Loading transformer 1", "Quantizing Transformer 1", "Moving transformer 1 to CPU",
              "Loading transformer 2", "Quantizing Transformer 2", "Moving transformer 2 to CPU",
              "Creating DualWanTransformer3DModel",
              "Applying Accuracy Recovery Adapter to Transformers", "Loading UMT5EncoderModel",
              "Quantizing UMT5EncoderModel", "Loading VAE", "Making pipe", "Preparing Model"]


def ext_load(label):
    """An extension model (BaseModel): ends with `Model Loaded`."""
    return ["Loading %s model" % label, "Loading transformer", "Quantizing Transformer",
            "Loading text encoder", "Quantizing text encoder", "Loading VAE", "Making pipe",
            "Preparing Model", "Model Loaded"]


def video_dataset(folder, res, frames, n=12):
    return ["Dataset: " + folder, "  -  Preprocessing video dimensions",
            webbar("", 0, n), webbar("", n, n), "  -  Found %d videos" % n,
            "Bucket sizes for %s:" % folder, "%dx%dx%df: %d files" % (res * 16 // 9 // 32 * 32, res, frames, n),
            "1 buckets made", "Caching latents for " + folder, " - Saving latents to disk"]


# ==== A: before training =========================================================================

# A1. Qwen-Image from the web UI: low_vram and quantize are already on (UI defaults).
N = "qwen_image_2512_posters"
j = job(N, "qwen_image:2512", low_vram=True, quantize=True,
        train_extra={"cache_text_embeddings": True},
        model_extra={"qtype": "uint3|ostris/accuracy_recovery_adapters/qwen_image_2512_torchao_uint3.safetensors"})
case("a-qwen-image-ui-low-vram-already-on", j,
     echo(j) + ["Loading Qwen Image model", "Loading transformer", "Quantizing Transformer",
                " - quantizing 60 transformer blocks"] + [webbar("", n, 60) for n in range(0, 38, 4)]
     + fatal(oom_new("540.00 MiB", "212.69 MiB", pid=4471),
             [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
              ("extensions_built_in/diffusion_models/qwen_image/qwen_image.py", 131, "load_model",
               "quantize_model(self, transformer)"),
              ("toolkit/util/quantize.py", 452, "quantize_model", "quantize(block, weights=qtype)")]),
     exp(True, "before_training", "model_load", None, OOM3, "image", [],
         notes="Web UI job (Job ID line), OOM while quantizing blocks: A in model_load, whose fix "
               "(SPEC 3.4) is low_vram. The UI file already has low_vram, quantize and quantize_te "
               "on, so that step is done, and no other fix acts on a model load (a smaller bucket "
               "or batch does not shrink the weights): the settings oomfix knows are exhausted for "
               "this phase, so there is no first fix (null). Not E, so not fresh_worker."))

# A2. Qwen-Image-Edit-Plus: per-prompt sample sizes, baseline sample OOM.
N = "qwen_edit_plus_relight"
j = job(N, "qwen_image_edit_plus:2511", low_vram=True, quantize=True, res=(512, 768),
        ds_extra={"control_path": ROOT + "/datasets/qwen_edit_plus_relight_ctrl"},
        train_extra={"cache_text_embeddings": True})
proc(j)["sample"]["samples"] = [
    {"prompt": "relight the room with warm sunset light", "width": 1024, "height": 1536,
     "ctrl_img_1": ROOT + "/datasets/ctrl/room.png"},
    {"prompt": "make it a rainy night", "width": 1328, "height": 1328,
     "ctrl_img_1": ROOT + "/datasets/ctrl/street.png"}]
case("a-qwen-edit-plus-baseline-per-prompt-size", j,
     echo(j) + qwen_load(True) + LORA + dataset(ROOT + "/datasets/qwen_edit_plus_relight", 768)
     + ["Caching text_embeddings for " + ROOT + "/datasets/qwen_edit_plus_relight",
        " - Saving text embeddings to disk"] + other_bars("Caching text embeddings to disk", 0, 24, 24)[::8]
     + ["Caching embeddings and unloading text encoder", "", "***** UNLOADING TEXT ENCODER *****",
        "Embeddings cached to disk. We dont need the text encoder anymore",
        "***********************************", "Generating baseline samples before training"]
     + other_bars("Generating Samples", 0, 0, 2) + [webbar("", n, 25) for n in (0, 9, 18, 25)]
     + fatal(oom_new("3.38 GiB", "1.97 GiB"), F_BASELINE),
     exp(True, "before_training", "baseline_sampling", None, OOM3, "image",
         ["lighter_sampling", "disable_sampling"],
         notes="Text embeddings cached and the encoder unloaded, then the baseline sample of a "
               "1024x1536 per-prompt preview OOMs in the VAE decode: A in baseline_sampling. "
               "lighter_sampling (it also clamps samples[j].width/height), or disable_sampling."))

# A3. SDXL: no quantization, no low_vram; OOM while moving the UNet to the GPU.
N = "sdxl_watercolor"
j = job(N, "sdxl", quantize=False, ui=False, steps=2000, sw=1024, sh=1024,
        model_extra={"name_or_path": "stabilityai/stable-diffusion-xl-base-1.0"})
for k in ("qtype", "quantize_te", "low_vram", "quantize"):
    proc(j)["model"].pop(k)
case("a-sdxl-model-load-low-vram-not-applicable", j,
     echo(j) + ["Loading SDXL model", "Loading UNet",
                other_bars("Loading pipeline components...", 0, 7, 7, joined=True)]
     + fatal(oom_incl("50.00 MiB", "21.62 MiB", "7.75 GiB"),
             [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
              (LEGACY_LOAD, 912, "load_model", "self.unet.to(self.device_torch, dtype=dtype)"),
              (PKG + "/torch/nn/modules/module.py", 1355, "to", "return self._apply(convert)")]),
     exp(True, "before_training", "model_load", None, OOM3, "image", [],
         notes="An 8 GB card. Legacy SDXL class: no `Model Loaded`. A in model_load gives low_vram, "
               "but SDXL honours neither low_vram nor quantization (not applicable), and no other "
               "fix acts on a model load (SPEC 3.4: a fix must act on the phase that failed; the "
               "1024 bucket does not shrink the UNet): exhausted for this phase, first fix null."))

# A4. HiDream with quantization off: OOM while loading the Llama text encoder.
N = "hidream_full_precision"
j = job(N, "hidream", res=(1024,), quantize=False, low_vram=False, steps=2500,
        model_extra={"name_or_path": "HiDream-ai/HiDream-I1-Full"})
case("a-hidream-quantize-off-model-load", j,
     echo(j) + ["Loading HiDream model", "Loading transformer",
                "Loading Llama3 text encoder", "Loading checkpoint shards:   0%|          | 0/4 [00:00<?, ?it/s]",
                "Loading checkpoint shards:  50%|█████     | 2/4 [00:09<00:09,  4.61s/it]"]
     + fatal(oom_incl("1.96 GiB", "1.41 GiB", "47.40 GiB", "45.93 GiB"),
             [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
              ("extensions_built_in/diffusion_models/hidream/hidream_model.py", 187, "load_model",
               "text_encoder_4 = LlamaForCausalLM.from_pretrained("),
              (PKG + "/transformers/modeling_utils.py", 4480, "_load_pretrained_model",
               "new_error_msgs, offload_index, state_dict_index = _load_state_dict_into_meta_model(")]),
     exp(True, "before_training", "model_load", None, OOM3, "image", ["low_vram"],
         notes="HiDream on a 48 GB card with quantize off: the Llama encoder's shards do not fit. "
               "A in model_load, low_vram (which also turns quantize and quantize_te on) is to do."))

# A5. LTX-2 with a 121-frame video set and an image set: OOM caching the video latents.
N = "ltx2_street_dance"
j = job(N, "ltx2", res=(512,), frames=121, low_vram=True, sw=768, sh=512, sframes=121, steps=3000)
img = copy.deepcopy(proc(j)["datasets"][0])
img.update({"folder_path": ROOT + "/datasets/ltx2_street_dance_stills", "resolution": [768, 1024],
            "num_frames": 1})
proc(j)["datasets"].append(img)
case("a-ltx2-two-datasets-video-cache-121", j,
     echo(j) + ext_load("LTX2") + LORA
     + video_dataset(ROOT + "/datasets/ltx2_street_dance", 512, 121, n=14)
     + other_bars("Caching latents to disk", 0, 3, 14)
     + fatal(oom_new("12.66 GiB", "6.02 GiB", "31.36 GiB"), F_CACHE),
     exp(True, "before_training", "caching", None, OOM3, "video", ["num_frames"],
         notes="Two datasets: 121-frame clips at 512 and stills at 768/1024. The VAE encode of a "
               "121-frame clip OOMs while caching latents: A in caching, video -> num_frames."))

# A6. FLUX.2: OOM in encode_prompt while caching text embeddings (the Mistral encoder).
N = "flux2_brand_kit"
j = job(N, "flux2", low_vram=False, quantize=True, steps=3000,
        train_extra={"cache_text_embeddings": True})
case("a-flux2-encode-prompt-te-cache", j,
     echo(j) + ext_load("Flux2") + LORA + dataset(ROOT + "/datasets/flux2_brand_kit", 1024)
     + ["Caching text_embeddings for " + ROOT + "/datasets/flux2_brand_kit",
        " - Saving text embeddings to disk"] + other_bars("Caching text embeddings to disk", 0, 1, 40)
     + fatal(oom_new("1.50 GiB", "884.00 MiB", pid=1207),
             [("jobs/process/BaseSDTrainProcess.py", 1960, "run",
               "self.data_loader = get_dataloader_from_datasets("),
              ("toolkit/dataloader_mixins.py", 2290, "cache_text_embeddings",
               "prompt_embeds = self.sd.encode_prompt(captions)"),
              ("extensions_built_in/diffusion_models/flux2/flux2_model.py", 402, "encode_prompt",
               "prompt_embeds = self.text_encoder(input_ids, output_hidden_states=True)"),
              (PKG + "/transformers/models/mistral/modeling_mistral.py", 410, "forward",
               "hidden_states = decoder_layer(")]),
     exp(True, "before_training", "caching", None, OOM3, "image", ["drop_largest_bucket"],
         notes="encode_prompt of the text encoder, called by cache_text_embeddings (the outermost "
               "frame naming a phase) after 'Caching text_embeddings for': A in caching, image -> "
               "drop_largest_bucket."))

# A7. Legacy is_flux job with sample.prompts: baseline sample in `Generating Images`.
N = "flux_dev_legacy_prompts"
j = job(N, "flux", res=(512, 768, 1024), quantize=True, ui=False, steps=2000, sw=1024, sh=1024,
        model_extra={"name_or_path": "black-forest-labs/FLUX.1-dev", "is_flux": True})
del proc(j)["model"]["arch"]
del proc(j)["model"]["low_vram"]
smp = proc(j)["sample"]
smp["prompts"] = [s["prompt"] for s in smp.pop("samples")]
smp["sample_steps"] = 20
case("a-is-flux-baseline-generating-images", j,
     echo(j) + ["Loading Flux model", "Loading transformer", "Quantizing transformer",
                "Loading VAE", "Loading T5", "Quantizing T5", "Loading CLIP", "Making pipe",
                "Preparing Model"] + LORA
     + dataset(ROOT + "/datasets/flux_dev_legacy_prompts", 1024, joined=True)
     + ["Generating baseline samples before training",
        other_bars("Generating Images", 0, 0, 2, joined=True)
        + "".join("\r" + webbar("", n, 20) for n in range(0, 21))
        + "Error running job: " + oom_new("2.25 GiB", "1.12 GiB")]
     + ejr_box("x")[1:] + tb(F_BASELINE[:2] + [
         (LEGACY_LOAD, 1394, "generate_images", "img = pipeline(**extra, **kwargs).images[0]"),
         (PKG + "/diffusers/models/autoencoders/autoencoder_kl.py", 323, "decode",
          "decoded = self._decode(z).sample")], "torch.OutOfMemoryError: " + oom_new("2.25 GiB", "1.12 GiB")),
     exp(True, "before_training", "baseline_sampling", None, OOM3, "image",
         ["lighter_sampling", "disable_sampling"],
         notes="No arch, is_flux: true -> flux (image). Legacy class: the `Generating Images` bar "
               "(leave=False) and the inner sampler bar, the message glued to the last frame. "
               "A in baseline_sampling; legacy sample.prompts with sample 1024 -> lighter_sampling."))

# ==== B: first steps =============================================================================

# B1. The caught OOM comes back as the cause of the abort: a chained traceback through
#     accelerate's backward.
N = "zimage_deturbo_inks"
j = job(N, "zimage:deturbo", res=(512, 768, 1024), steps=3000, ds_extra={"batch_size": 2})
lines = echo(j) + ext_load("ZImage") + LORA + dataset(ROOT + "/datasets/zimage_deturbo_inks", 1024)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 2, 3000)
for k in (1, 2, 3):
    lines += skip(k) + [tframe(N, 2 + k, 3000)]
msg = oom_new("1.27 GiB", "618.00 MiB", pid=3102)
lines += ejr_box(ABORT)
# the caught exception's traceback starts at the frame that caught it: no run.py frames
lines += ["Traceback (most recent call last):"] + tb(F_BACKWARD, "torch.OutOfMemoryError: " + msg)[9:]
lines += ["", "During handling of the above exception, another exception occurred:", ""]
lines += tb([("jobs/process/BaseSDTrainProcess.py", 2636, "run",
              "raise RuntimeError(\"OOM during training step 3 times in a row, aborting training\")")],
            "RuntimeError: " + ABORT)
case("b-chained-backward-then-abort", j, lines,
     exp(True, "first_steps", "training", 6, OOM3 + ["oom_abort", "oom_skip"], "image",
         ["batch_size"],
         notes="Steps 3-5 skipped (1/3..3/3), the 4th OOM in a row at step 6 (bar shows 5). The "
               "abort is raised inside the except block, so Python prints the caught "
               "torch.OutOfMemoryError first (frames backward, _engine_run_backward), then 'During "
               "handling...' and the RuntimeError. One failure: B at step 6. Gradient "
               "checkpointing on by default; the dataset's batch_size 2 makes batch_size the "
               "first plan step not done."))

# B2. Klein 4B: the asynchronous CUDA error escapes the guard in optimizer.step.
N = "klein4b_packshots"
j = job(N, "flux2_klein_4b", res=(512, 768), batch=2, steps=2000, ui=False)
case("b-klein-4b-optimizer-step-async", j,
     echo(j) + ext_load("Flux2 Klein") + LORA
     + dataset(ROOT + "/datasets/klein4b_packshots", 768, joined=True)
     + ["Skipping first sample due to config setting",
        cr_bars(N, 0, 5, 2000) + "Error running job: CUDA error: out of memory"] + ASYNC_TAIL
     + ejr_box("x")[2:] + tb(F_OPTIM, "torch.AcceleratorError: CUDA error: out of memory")
     + ASYNC_TAIL[:3],
     exp(True, "first_steps", "training", 6, ["cuda_error_oom"], "image", ["batch_size"],
         notes="The 8-bit optimizer allocates its state lazily in the first optimizer.step of "
               "each parameter; here at step 6 (bar shows 5) as an asynchronous CUDA error the "
               "guard does not catch. optimizer.step is part of the training step: B. Batch 2 -> "
               "batch_size (gradient checkpointing on by default)."))

# B3. Wan 2.1 I2V 480p from the web UI: skips from step 1, abort at step 4.
N = "wan21_i2v_480_smoke"
j = job(N, "wan21_i2v:14b480p", res=(480,), frames=81, low_vram=True, sw=832, sh=480, sframes=81,
        steps=2000, ds_extra={"control_path": ROOT + "/datasets/wan21_i2v_480_smoke_first_frames"})
lines = echo(j) + WAN_LOAD + LORA + video_dataset(ROOT + "/datasets/wan21_i2v_480_smoke", 480, 81)
lines += other_bars("Caching latents to disk", 0, 12, 12)[::4]
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 0, 2000)
for k in (1, 2, 3):
    lines += skip(k) + [tframe(N, k, 2000)]
lines += ejr_box(ABORT) + tb(F_TRAIN[:1], "RuntimeError: " + ABORT)
case("b-wan21-i2v-480p-skips-from-step-1", j, lines,
     exp(True, "first_steps", "training", 4, ["oom_abort", "oom_skip"], "video", ["num_frames"],
         notes="Wan 2.1 class: no `Model Loaded`. Steps 1-3 skipped (the bar still advances), the "
               "4th OOM in a row aborts at step 4 (bar shows 3): B, video, 81 frames -> num_frames."))

# B4. MiniMax H3 through a runner that tags each line with its stream.
N = "minimax_h3_waves"
j = job(N, "minimax_h3", res=(512,), frames=45, low_vram=True, sw=832, sh=480, sframes=45,
        steps=3000, ui=False)
out = echo(j) + ext_load("MiniMax H3") + LORA + video_dataset(ROOT + "/datasets/minimax_h3_waves", 512, 45)
lines = ["stdout | " + l for l in out]
lines += ["stderr | " + l for l in other_bars("Caching latents to disk", 0, 12, 12)[::6]]
lines += ["stdout | Skipping first sample due to config setting"]
lines += ["stderr | " + tframe(N, n, 3000) for n in range(0, 9)]
lines += ["stdout | Error running job: CUDA error: out of memory"]
lines += ["stderr | " + l for l in ASYNC_TAIL + tb(F_TRAIN, "torch.AcceleratorError: CUDA error: out of memory")]
case("b-minimax-h3-stream-tagged", j, lines,
     exp(True, "first_steps", "training", 9, ["cuda_error_oom"], "video", ["num_frames"],
         notes="Every line carries 'stdout | ' or 'stderr | ' (a runner tagging the two streams). "
               "45-frame clips (4k+1), the asynchronous CUDA error at step 9 (bar shows 8): B, video "
               "-> num_frames."))

# B5 / E1. An older trainer without the OOM guard: the OOM of a training step is fatal at once.
#          Wan 2.1 1.3B with 33-frame clips at 480, batch 1, gradient checkpointing: conservative.
N = "wan21_1b_loops"
j = job(N, "wan21:1b", res=(480,), frames=33, low_vram=False, quantize=False, sw=832, sh=480,
        sframes=33, steps=2000)
for nm, shown, want in (("e-video-conservative-step-1-zero-free", 0, None),
                        ("b-video-conservative-step-2-zero-free-not-e", 1, None)):
    msg = oom_new("20.00 MiB", "0 bytes", "11.72 GiB")
    lines = echo(j) + WAN_LOAD + LORA + video_dataset(ROOT + "/datasets/wan21_1b_loops", 480, 33)
    lines += other_bars("Caching latents to disk", 0, 12, 12)[::6]
    lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, shown, 2000)
    lines += fatal(msg, F_BACKWARD)
    if shown == 0:
        e = exp(True, "environment", "training", 1, OOM4, "video", ["fresh_worker"],
                notes="A trainer from before the OOM guard (no skip banners: the first OOM of a "
                      "step is fatal). Conservative job (batch 1, gradient checkpointing on, bucket "
                      "480, 33 frames) failing in step 1 (bar shows 0) with 'of which 0 bytes is "
                      "free': E, fresh_worker.")
    else:
        e = exp(True, "first_steps", "training", 2, OOM4, "video", ["num_frames"],
                notes="The same job and message, but step 1 passed and step 2 failed (bar shows "
                      "1). E needs A or a failure in step 1, so this is B. Video: num_frames "
                      "(33 -> 17) is the first plan step not done.")
    case(nm, j, lines, e)

# ==== E: environment =============================================================================

# E2. One bucket of 768, previews at 1024x1024: the rule looks at buckets, not previews.
N = "zimage_turbo_768_only"
j = job(N, "zimage:turbo", res=(768,), quantize=True, low_vram=False, sw=1024, sh=1024, steps=3000)
case("e-single-bucket-768-preview-1024", j,
     echo(j) + ["Loading ZImage model", "Loading transformer", "Quantizing Transformer"]
     + fatal(oom_new("30.00 MiB", "0 bytes", "23.55 GiB", pid=2231),
             [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()"),
              ("extensions_built_in/diffusion_models/z_image/z_image.py", 160, "load_model",
               "quantize_model(self, transformer)"),
              ("toolkit/util/quantize.py", 452, "quantize_model", "quantize(block, weights=qtype)")]),
     exp(True, "environment", "model_load", None, OOM4, "image", ["fresh_worker"],
         notes="Judgement: SPEC's conservative test names batch sizes, gradient checkpointing, "
               "buckets and frames; sample width/height are not in it. One 768 bucket, batch 1, "
               "gradient checkpointing on: conservative, although previews are 1024x1024. A "
               "model-load OOM with '0 bytes is free' while 'Process 2231' holds 22 GiB: E."))

# E3. LTX-2 with 25-frame clips: cuBLAS cannot get its workspace in the baseline sample.
N = "ltx2_short_clips"
j = job(N, "ltx2", res=(512, 768), frames=25, low_vram=True, sw=768, sh=512, sframes=25, steps=2000)
case("e-ltx2-cublas-baseline-sample", j,
     echo(j) + ext_load("LTX2") + LORA + video_dataset(ROOT + "/datasets/ltx2_short_clips", 512, 25)
     + other_bars("Caching latents to disk", 0, 12, 12)[::6]
     + ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 0, 2)
     + ejr_box(CUBLAS) + tb(F_BASELINE[:3] + [
         (PKG + "/torch/nn/modules/linear.py", 125, "forward", "return F.linear(input, self.weight, self.bias)")],
         "RuntimeError: " + CUBLAS),
     exp(True, "environment", "baseline_sampling", None, ["cublas_alloc_failed"], "video",
         ["fresh_worker"],
         notes="25-frame clips (8k+1), buckets <= 768, batch 1, gradient checkpointing on: "
               "conservative. CUBLAS_STATUS_ALLOC_FAILED in the baseline sample is A, and with the "
               "conservative job it is E."))

# E4. arch flex1 with the legacy gradient_accumulation_steps 4; cuBLAS in step 1.
N = "flex1_accum_logo"
j = job(N, "flex1", res=(512, 768), quantize=True, ui=False, steps=2000,
        model_extra={"name_or_path": "ostris/Flex.1-alpha"})
legacy_accum(j, 4)
case("e-flex1-accumulation-cublas-step-1", j,
     echo(j) + ["Loading Flux model", "Loading transformer", "Quantizing transformer", "Loading VAE",
                "Loading T5", "Quantizing T5", "Loading CLIP", "Making pipe", "Preparing Model"]
     + LORA + dataset(ROOT + "/datasets/flex1_accum_logo", 768, joined=True)
     + ["Skipping first sample due to config setting",
        cr_bars(N, 0, 0, 2000) + "Error running job: " + CUBLAS]
     + ejr_box("x")[1:] + tb(F_BACKWARD, "RuntimeError: " + CUBLAS),
     exp(True, "environment", "training", 1, ["cublas_alloc_failed"], "image", ["fresh_worker"],
         notes="arch flex1 -> flux (image). Judgement: gradient_accumulation_steps 4 multiplies "
               "work, not the memory of one micro-batch, and SPEC's test says 'every batch size "
               "1': still conservative. cuBLAS fails in step 1 (bar shows 0, uncaught): E."))

# E5 (not E). SD 1.5, one bucket 768 but a dataset with batch_size 2: not conservative.
N = "sd15_pixel_icons"
j = job(N, "sd15", res=(768,), quantize=False, ui=False, steps=1500, sw=512, sh=512,
        ds_extra={"batch_size": 2}, model_extra={"name_or_path": "stable-diffusion-v1-5/stable-diffusion-v1-5"})
for k in ("qtype", "quantize_te", "low_vram", "quantize"):
    proc(j)["model"].pop(k)
case("a-sd15-dataset-batch-2-zero-free-not-e", j,
     echo(j) + ["Loading SD model", "Preparing Model"] + LORA
     + dataset(ROOT + "/datasets/sd15_pixel_icons", 768, joined=True)[:-1]
     + [other_bars("Caching latents to disk", 0, 7, 24, joined=True)]
     + fatal(oom_incl("96.00 MiB", "0 bytes", "5.78 GiB"), F_CACHE),
     exp(True, "before_training", "caching", None, OOM4, "image", ["drop_largest_bucket"],
         notes="Bucket 768, gradient checkpointing on, train.batch_size 1, but the dataset's own "
               "batch_size is 2: not conservative, so '0 bytes is free' in latent caching stays A. "
               "Image -> drop_largest_bucket (the single 768 bucket steps down to 512)."))

# ==== C: sampling ================================================================================

# C1. SD 1.5: the periodic sample in the legacy `Generating Images` bar, terminal capture.
N = "sd15_comic_inks"
j = job(N, "sd15", res=(512, 768), quantize=False, ui=False, steps=2000, sw=768, sh=768,
        sample_extra={"sample_every": 500})
for k in ("qtype", "quantize_te", "low_vram", "quantize"):
    proc(j)["model"].pop(k)
case("c-sd15-generating-images-at-500", j,
     echo(j) + ["Loading SD model", "Preparing Model"] + LORA
     + dataset(ROOT + "/datasets/sd15_comic_inks", 768, joined=True)
     + ["Skipping first sample due to config setting", cr_bars(N, 0, 500, 2000), "",
        "Saving at step 500", "Saved checkpoint to out/%s/%s_000000500.safetensors" % (N, N),
        other_bars("Generating Images", 0, 1, 2, joined=True)
        + "".join("\r" + webbar("", n, 25) for n in range(0, 26))]
     + fatal(oom_old("1.13 GiB", "712.00 MiB"), F_SAMPLE[:2] + [
         (LEGACY_LOAD, 1394, "generate_images", "img = pipeline(**extra, **kwargs).images[0]")],
         cls="RuntimeError"),
     exp(True, "sampling", "sampling", 500, ["cuda_oom", "tried_to_allocate"], "image",
         ["lighter_sampling", "disable_sampling"],
         notes="Old torch on a 6 GB card: a plain RuntimeError (no torch_oom). Save at 500 done, "
               "then the legacy `Generating Images` bar of the periodic sample: C at 500; previews "
               "are 768x768 -> lighter_sampling."))

# C2. OmniGen2: previews already light (512, 20 steps, every 500): the next is disable_sampling.
N = "omnigen2_mascot"
j = job(N, "omnigen2", res=(512, 768), quantize=False, low_vram=False, sw=512, sh=512, steps=3000,
        sample_extra={"sample_every": 500, "sample_steps": 20})
lines = echo(j) + ext_load("OmniGen2") + LORA + dataset(ROOT + "/datasets/omnigen2_mascot", 768)
lines += ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 2, 2)
lines += ui_bars(N, 0, 1000, 3000)[::10] + [tframe(N, 1000, 3000), "", "Saving at step 1000",
                                            "Saved checkpoint to %s/output/%s/%s_000001000.safetensors" % (ROOT, N, N)]
lines += other_bars("Generating Samples", 0, 1, 2) + [webbar("", n, 20) for n in (0, 10, 20)]
lines += fatal(oom_new("768.00 MiB", "402.19 MiB", pid=955), F_SAMPLE)
case("c-omnigen2-light-previews-disable", j, lines,
     exp(True, "sampling", "sampling", 1000, OOM3, "image", ["disable_sampling"],
         notes="C at 1000 (save done, then `Generating Samples`). SPEC 3.4: lighter_sampling, then "
               "disable_sampling. The previews are already at the clamp (512x512, 20 steps, every "
               "500), so lighter_sampling is done and the first fix is disable_sampling."))

# C3. Wan 2.2 14B I2V through a wrapper that stamps every line.
N = "wan22_i2v_product_spin"
j = job(N, "wan22_14b_i2v", res=(512,), frames=33, low_vram=True, sw=832, sh=480, sframes=81,
        steps=2000, sample_extra={"sample_every": 500},
        ds_extra={"control_path": ROOT + "/datasets/wan22_i2v_product_spin_first"})
lines = echo(j) + WAN22_LOAD + LORA + video_dataset(ROOT + "/datasets/wan22_i2v_product_spin", 512, 33)
lines += other_bars("Caching latents to disk", 0, 12, 12)[::6]
lines += ["Skipping first sample due to config setting"]
lines += [cr_bars(N, 0, 500, 2000), "", "Saving at step 500",
          "Saved checkpoint to %s/output/%s/%s_000000500.safetensors" % (ROOT, N, N),
          other_bars("Generating Samples", 0, 0, 2, joined=True)
          + "".join("\r" + webbar("", n, 40) for n in range(0, 41))]
lines += fatal(oom_new("14.06 GiB", "7.73 GiB", "79.19 GiB", used="71.40 GiB"), F_SAMPLE)
case("c-wan22-i2v-stamped-wrapper", j, stamped(lines),
     exp(True, "sampling", "sampling", 500, OOM3, "video", ["lighter_sampling", "disable_sampling"],
         notes="A hosted wrapper stamps each line '[2026-11-30 12:mm:ss] ' (the bar frames of a "
               "line share one stamp). Trains on 33-frame clips, previews 81 frames; the VAE decode "
               "of the sample at 500 OOMs: C, lighter_sampling (clamps sample frames to 33)."))

# ==== D: intermittent ============================================================================

# D1. Chroma: skips 1/3 and 2/3 in a row, then 500 good steps and a normal finish.
N = "chroma_botanical"
j = job(N, "chroma", res=(512, 768, 1024), quantize=True, steps=800, sample_extra={"sample_every": 400})
lines = echo(j) + ext_load("Chroma") + LORA + dataset(ROOT + "/datasets/chroma_botanical", 1024)
lines += ["Generating baseline samples before training"] + other_bars("Generating Samples", 0, 2, 2)
lines += ui_bars(N, 0, 300, 800)[::25] + [tframe(N, 300, 800)] + skip(1) + [tframe(N, 301, 800)]
lines += skip(2) + ui_bars(N, 302, 400, 800)[::7]
lines += [tframe(N, 400, 800), "", "Saving at step 400",
          "Saved checkpoint to %s/output/%s/%s_000000400.safetensors" % (ROOT, N, N)]
lines += other_bars("Generating Samples", 0, 2, 2) + ui_bars(N, 401, 800, 800)[::20] + [tframe(N, 800, 800)]
lines += ["Saved checkpoint to %s/output/%s/%s.safetensors" % (ROOT, N, N)]
lines += other_bars("Generating Samples", 0, 2, 2)
case("d-chroma-two-skips-then-finished", j, lines,
     exp(True, "intermittent", "training", 302, ["oom_skip"], "image", ["drop_largest_bucket"],
         notes="Skips 1/3 (step 301) and 2/3 (step 302), then 500 good steps, the final save and "
               "sample: nothing fatal, but OOMs the run survived are D (oom true). Judgement: "
               "failed_step is the last skipped step (302), the most recent one; the first was 301."))

# D2. Krea 2: the traceback lands in the middle of a bar frame (stdout and stderr interleaved).
N = "krea2_fabric"
j = job(N, "krea2:turbo", res=(512, 768, 1024), low_vram=True, steps=2000, ui=False)
head = echo(j) + ext_load("Krea2") + LORA + dataset(ROOT + "/datasets/krea2_fabric", 1024, joined=True)
head += ["Skipping first sample due to config setting"]
frame = tframe(N, 902, 2000)
cut = frame.index("| 90") + 4
err = ["Traceback (most recent call last):"] + tb(F_TRAIN, "torch.AcceleratorError: CUDA error: out of memory")[1:]
lines = head + [cr_bars(N, 880, 901, 2000) + "\r" + frame[:cut] + err[0]] + err[1:]
lines += ["CUDA kernel errors might be asynchronously reported at some other API call, so the "
          "stacktrace below might be incorrect.", frame[cut:]]
case("d-krea2-traceback-mid-bar", j, lines,
     exp(True, "intermittent", "training", 902, ["cuda_error_oom"], "image", ["drop_largest_bucket"],
         notes="The bar's frame for 902 was half written ('| 90') when the traceback came on the "
               "other stream, so 'Traceback (most recent call last):' follows it on the same line "
               "and the rest of the frame comes after the traceback. The last whole frame shows 901: "
               "D at step 902 (asynchronous error, not caught)."))

# C4. stderr only: the traceback of a periodic sample lands inside a half-written bar frame.
N = "chroma_stderr_glued"
j = job(N, "chroma", res=(512, 768), quantize=True, steps=1500, ui=False,
        sample_extra={"sample_every": 250})
frame = tframe(N, 751, 1500)
cut = frame.index("| 75") + 4
err = tb(F_SAMPLE[:3] + [
    ("extensions_built_in/diffusion_models/chroma/chroma_model.py", 388, "get_prompt_embeds",
     "prompt_embeds = self.text_encoder(input_ids)")],
    "torch.OutOfMemoryError: " + oom_new("192.00 MiB", "88.31 MiB"))
case("c-stderr-sample-traceback-mid-bar", j,
     [other_bars("Caching latents to disk", 0, 24, 24, joined=True),
      cr_bars(N, 0, 750, 1500) + "\r" + frame[:cut] + err[0]] + err[1:] + [frame[cut:]],
     exp(True, "sampling", "sampling", 750, OOM3, "image", ["lighter_sampling", "disable_sampling"],
         notes="2> capture (no trainer messages). The sample at 750 fails encoding its prompts, "
               "before its `Generating Samples` bar is drawn, and the traceback is written into a "
               "half-drawn training frame ('| 75'). Only its frames (sample, generate_images) tell "
               "that it was sampling: C at 750, not a training step 751."))

# D3. Wan 2.2 14B I2V with three datasets (121 and 41 frames, one image set with batch 2).
N = "wan22_i2v_mixed_sets"
j = job(N, "wan22_14b_i2v", res=(512,), frames=121, low_vram=True, sw=832, sh=480, sframes=41,
        steps=3000, ds_extra={"control_path": ROOT + "/datasets/mixed_first_frames"})
legacy_accum(j, 2)
d0 = proc(j)["datasets"][0]
d1 = dict(copy.deepcopy(d0), folder_path=ROOT + "/datasets/wan22_stills", num_frames=1,
          resolution=[512, 768], batch_size=2)
d2 = dict(copy.deepcopy(d0), folder_path=ROOT + "/datasets/wan22_short_clips", num_frames=41)
proc(j)["datasets"] += [d1, d2]
lines = echo(j) + WAN22_LOAD + LORA
for f, r, fr in ((d0["folder_path"], 512, 121), (d2["folder_path"], 512, 41)):
    lines += video_dataset(f, r, fr) + other_bars("Caching latents to disk", 0, 12, 12)[::6]
lines += dataset(d1["folder_path"], 768)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 640, 3000)[::40]
lines += [tframe(N, 640, 3000)] + skip(1) + ui_bars(N, 641, 1230, 3000)[::45]
lines += [tframe(N, 1230, 3000)]
for k in (1, 2, 3):
    lines += skip(k) + [tframe(N, 1230 + k, 3000)]
lines += ejr_box(ABORT) + tb(F_TRAIN[:1], "RuntimeError: " + ABORT)
case("d-wan22-i2v-three-datasets-abort", j, lines,
     exp(True, "intermittent", "training", 1234, ["oom_abort", "oom_skip"], "video",
         ["num_frames"],
         notes="Three datasets (121-frame clips, stills with batch_size 2, 41-frame clips) and the "
               "legacy gradient_accumulation_steps. A skip at 641 was survived; 1231-1233 skipped, "
               "abort at 1234: D. Video -> num_frames."))

# D4. FLUX.2: an OOM in a validation pass after step 500.
N = "flux2_val_split"
j = job(N, "flux2", res=(512, 768, 1024), low_vram=True, steps=2000,
        proc_extra={"validation": {"folder_path": ROOT + "/datasets/flux2_val_split_holdout",
                                   "validate_every": 500, "num_samples": 8}})
lines = echo(j) + ext_load("Flux2") + LORA + dataset(ROOT + "/datasets/flux2_val_split", 1024)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 500, 2000)[::25] + [tframe(N, 500, 2000)]
lines += ["", "Saving at step 500", "Saved checkpoint to %s/output/%s/%s_000000500.safetensors" % (ROOT, N, N)]
lines += other_bars("Generating Samples", 0, 2, 2) + other_bars("Validating", 0, 3, 8)
lines += fatal(oom_new("2.63 GiB", "1.88 GiB"), [
    ("jobs/process/BaseSDTrainProcess.py", 2722, "run", "self.run_validation(self.step_num)"),
    ("jobs/process/BaseSDTrainProcess.py", 1512, "run_validation",
     "loss = self.validation_step(batch, validation_config=self.validation_config)"),
    ("extensions_built_in/sd_trainer/SDTrainer.py", 2410, "validation_step",
     "noise_pred = self.predict_noise(noisy_latents, timesteps, conditional_embeds)")])
case("d-flux2-validation-pass", j, lines,
     exp(True, "intermittent", "training", 501, OOM3, "image", ["drop_largest_bucket"],
         notes="Judgement: SPEC 3.2 has no validation phase. The save and sample at 500 finished; "
               "the `Validating` bar (a forward pass over held-out images at the training sizes) "
               "moves no phase, so the last marker is the training bar (500): training, failed_step "
               "501, after step 10 -> D, drop_largest_bucket. Not C: no sample was being generated."))

# D5. The user pressed Stop after a survived skip.
N = "zimage_deturbo_stop"
j = job(N, "zimage:deturbo", res=(512, 768, 1024), steps=3000)
lines = echo(j) + ext_load("ZImage") + LORA + dataset(ROOT + "/datasets/zimage_deturbo_stop", 1024)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 40, 3000) + skip(1)
lines += ui_bars(N, 41, 57, 3000)
lines += ["", "========================================", "Job stopped",
          "========================================"]
case("d-skip-then-job-stopped", j, lines,
     exp(True, "intermittent", "training", 41, ["oom_skip"], "image", ["drop_largest_bucket"],
         notes="One skip at step 41, the run went on to 57 and the user pressed Stop ('Job "
               "stopped'). Stopping is not a failure; the OOM it survived still counts: D at 41."))

# ==== not OOM ====================================================================================

# N1. The stamped wrapper reports the host's OOM killer.
N = "ltx25_long_takes"
j = job(N, "ltx2.5", res=(768,), frames=121, low_vram=True, sw=768, sh=512, sframes=121, steps=3000)
lines = echo(j) + ext_load("LTX2.5") + LORA + video_dataset(ROOT + "/datasets/ltx25_long_takes", 768, 121, n=60)
lines += [other_bars("Caching latents to disk", 0, 37, 60, joined=True)]
lines += ["Killed", "Process exited with code 137"]
case("host-oom-stamped-wrapper", j, stamped(lines),
     exp(False, None, None, None, [], "video", [], other="host_oom",
         notes="Every line stamped '[2026-11-30 12:mm:ss] '. The log stops while caching 121-frame "
               "latents in RAM; the wrapper prints 'Killed' and exit code 137: host RAM, not GPU."))

# N2. A job name full of OOM words, a web UI log, and a shape error.
N = "retry after CUDA out of memory"
j = job(N, "qwen_image", res=(512, 768), low_vram=True, steps=1000,
        folder=ROOT + "/datasets/oom_retry")
lines = echo(j) + qwen_load() + LORA + dataset(ROOT + "/datasets/oom_retry", 768)
lines += ["Skipping first sample due to config setting"] + ui_bars(N, 0, 250, 1000)[::10]
lines += ["", "Saving at step 250", "Saved checkpoint to %s/output/%s/%s_000000250.safetensors" % (ROOT, N, N)]
lines += ui_bars(N, 251, 263, 1000)
lines += ejr_box("stack expects each tensor to be equal size, but got [16, 96, 64] at entry 0 and "
                 "[16, 96, 80] at entry 1")
lines += tb(F_TRAIN[:1] + [(PKG + "/torch/utils/data/_utils/collate.py", 212, "collate_tensor_fn",
                            "return torch.stack(batch, 0, out=out)")],
            "RuntimeError: stack expects each tensor to be equal size, but got [16, 96, 64] at "
            "entry 0 and [16, 96, 80] at entry 1")
case("decoy-job-name-oom-words-python-error", j, lines,
     exp(False, None, None, None, [], "image", [], other="python_error",
         notes="The job is called 'retry after CUDA out of memory': the banner, every training "
               "bar's description and the checkpoint path carry the words. None of it is error "
               "output. The run dies of a collate RuntimeError at step 264: python_error."))

# ==== no --job ===================================================================================

no_job("a-hidream-quantize-off-model-load", "nojob-a-model-load", ["low_vram"],
       "The HiDream log without --job: A in model_load -> low_vram (nothing can be seen done).")
no_job("e-video-conservative-step-1-zero-free", "nojob-step-1-zero-free-is-b",
       ["gradient_checkpointing", "num_frames", "batch_size", "drop_largest_bucket"],
       "The E log without --job: E needs the job to be conservative, which cannot be known, so the "
       "step-1 OOM is B. The plan is unknown: the first step of the rollback order. Without a kind "
       "that is gradient_checkpointing (image order); num_frames (video order) is as good.",
       timing="first_steps")
no_job("c-wan22-i2v-stamped-wrapper", "nojob-c-stamped-wrapper",
       ["lighter_sampling", "disable_sampling"],
       "The stamped Wan 2.2 log without --job: the training bar is the one with lr/loss: C at 500.")
no_job("d-chroma-two-skips-then-finished", "nojob-d-skips-survived",
       ["drop_largest_bucket", "num_frames"],
       "Survived skips without --job: D at 302; drop_largest_bucket (num_frames if it were video).")
no_job("b-chained-backward-then-abort", "nojob-b-chained-abort",
       ["gradient_checkpointing", "num_frames", "batch_size", "drop_largest_bucket"],
       "The chained traceback without --job: B at 6; nothing is known done, so the first step of "
       "the order.")


def main():
    m2.write_cases(OUT, {name: (j, data, expect, False) for name, (j, data, expect) in cases.items()})


if __name__ == "__main__":
    main()
