#!/usr/bin/env python3
"""A stand-in for AI Toolkit's `run.py JOB` that needs no GPU.

It reads a job (YAML or JSON), estimates the GPU memory each phase needs from the settings that
matter, compares it with a card of the given size, and prints what the trainer prints (the
config echo, the loading and quantizing lines, dataset setup and latent caching, the baseline
sample, tqdm bars joined by \\r, the OOM skip banners, sampling rounds, saves, and PyTorch's OOM
message and traceback), then exits as run.py does: 0 when the job finished, 1 when an exception
escaped (run.py re-raises it), 0 after Ctrl-C ("Job stopped"), and killed by SIGTERM like any
Python process without a handler.

    aitk_standin.py [--vram GB] [--other-process GB] [--delay SECONDS] [--fail python]
                    [--images N] [--bucket-steps N] [--late-sample GB] JOB

--vram (or STANDIN_VRAM_GB, default 24) is the card's size; --other-process GB makes another
process hold that much of it (then the OOM message says 0 bytes are free, as on a shared card);
--delay (or STANDIN_DELAY) sleeps after each training step, so a run can be followed, probed or
interrupted; --fail python makes dataset setup fail with a missing folder, which is not an OOM;
--bucket-steps N (default 4) is how many steps in a row each bucket gets: below 4, a bucket too
big for the card is skipped (the trainer's 3 skips) and the run survives it. --late-sample GB
makes each sampling round during training need GB more than the baseline sample before step 1
(memory the training has taken by then), so a run can pass its baseline and die at its first
sample during training.
STANDIN_ON_ERROR_SECONDS makes it pause after "Error running job: ..." (where the trainer writes
its status to the UI's database) before the rest. STANDIN_PID_FILE, when set, names a file the stand-in writes its pid into (tests use it to look
for orphans).

The memory model (GB) is deliberately simple but acts per phase, as the trainer does:
* model load: without low_vram the transformer goes to the card in 16 bits before it is quantized
  (its full size is the peak), then the text encoder likewise; with low_vram (where the arch
  honours it) both are quantized on the CPU and only their final size reaches the card;
* resident while training: the transformer, the VAE, the LoRA and its optimizer, and the text
  encoder unless it is unloaded (unload_text_encoder, cache_text_embeddings) or parked on the CPU
  by low_vram;
* latent caching: resident + the VAE encoding one item of the largest bucket (and its frames);
* a training step: resident + activations (per megapixel of the bucket, times batch, times latent
  frames, a quarter of it with gradient checkpointing, double in fp32);
* sampling: resident + the inference pass and VAE decode at the preview size and frames (the text
  encoder is parked by low_vram).
"""
import json
import os
import sys
import time

try:
    import yaml
except ImportError:  # JSON jobs still work
    yaml = None

ROOT = "/app/ai-toolkit"
PKG = "/usr/local/lib/python3.12/dist-packages"
OOM_HINT = ("If reserved but unallocated memory is large try setting "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
            "documentation for Memory Management  "
            "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")

# arch -> transformer GB, text encoder GB (16-bit), activation GB per megapixel, family, video
# temporal compression (0 = image model). Sizes follow the public checkpoints roughly.
ARCHS = {
    "flux": (23.8, 9.8, 6.0, "flux", 0), "sd3": (16.3, 11.0, 5.0, "sd3", 0),
    "sdxl": (5.1, 1.6, 2.5, "sdxl", 0), "sd1": (1.7, 0.5, 1.5, "sdxl", 0),
    "lumina2": (5.2, 5.2, 3.0, "lumina2", 0), "chroma": (17.8, 9.5, 5.0, "ext", 0),
    "flex2": (16.0, 9.8, 5.0, "ext", 0), "zimage": (12.3, 8.0, 4.0, "ext", 0),
    "qwen_image": (40.9, 16.6, 7.0, "ext", 0), "hidream": (34.0, 17.0, 7.0, "ext", 0),
    "flux2": (64.0, 48.0, 9.0, "ext", 0), "omnigen2": (8.0, 7.0, 3.0, "ext", 0),
    "wan21": (28.6, 11.4, 3.0, "wan", 4), "wan21_1b": (2.8, 11.4, 1.2, "wan", 4),
    "wan22_14b": (28.6, 11.4, 3.0, "wan", 4), "wan22_5b": (10.0, 11.4, 2.0, "wan", 4),
    "ltx2": (38.0, 24.0, 3.0, "ext", 8),
}
# What each arch's model class honours (the trainer's source, as oomfix's arch table).
LOW_VRAM = {"flux", "sd3", "omnigen2", "zimage", "qwen_image", "hidream", "flux2", "wan21",
            "wan21_1b", "wan22_14b", "wan22_5b", "ltx2"}
NO_QUANTIZE = {"sdxl", "sd1"}
QBITS = {"qfloat8": 8, "float8": 8, "convrot8": 8, "uint8": 8, "uint7": 7, "uint6": 6,
         "uint5": 5, "uint4": 4, "nvfp4": 4, "convrot4": 4, "uint3": 3, "uint2": 2}


class OOM(Exception):
    def __init__(self, need, held, frames):
        Exception.__init__(self, "CUDA out of memory")
        self.need, self.held, self.frames = need, held, frames


class Stand:
    def __init__(self, job, vram, other, delay, fail, images, bucket_steps=4, late_sample=0.0):
        self.job, self.delay, self.fail, self.images = job, delay, fail, images
        self.late_sample = late_sample
        self.bucket_steps = max(1, int(bucket_steps))
        self.capacity = round(vram * 0.981, 2)
        self.other = other
        # the CUDA context and the allocator's slack
        self.avail = self.capacity - other - 0.35
        self.bar_open = False
        cfg = job.get("config") or {}
        self.name = str(cfg.get("name") or "job")
        self.proc = (cfg.get("process") or [{}])[0] or {}
        p = self.proc
        self.train = p.get("train") or {}
        self.model = p.get("model") or {}
        self.sample = p.get("sample") or {}
        self.save = p.get("save") or {}
        self.datasets = p.get("datasets") or [{}]
        arch = str(self.model.get("arch") or "")
        tag = arch.split(":", 1)[1] if ":" in arch else ""
        arch = arch.split(":", 1)[0]
        if not arch:
            arch = "flux" if self.model.get("is_flux") else "sd3" if self.model.get("is_v3") else \
                "sdxl" if self.model.get("is_xl") else "sd1"
        if arch == "flex1":
            arch = "flux"
        if arch == "wan21" and tag == "1b":
            arch = "wan21_1b"
        if arch.startswith("ltx2"):
            arch = "ltx2"
        if arch.startswith("qwen_image"):
            arch = "qwen_image"
        self.arch = arch if arch in ARCHS else "zimage"
        self.t_gb, self.te_gb, self.act, self.family, self.tcomp = ARCHS[self.arch]
        self.video = self.tcomp > 0
        self.dt = 2.0 if str(self.train.get("dtype", "fp32")) in ("fp32", "float32") else 1.0
        self.quantize = bool(self.model.get("quantize")) and self.arch not in NO_QUANTIZE
        qte = self.model.get("quantize_te")
        self.quantize_te = (self.quantize if qte is None else bool(qte)) and self.arch not in NO_QUANTIZE
        self.low_vram = bool(self.model.get("low_vram")) and self.arch in LOW_VRAM
        self.te_off = bool(self.train.get("unload_text_encoder")) or \
            bool(self.train.get("cache_text_embeddings"))

    # ---- memory ------------------------------------------------------------------------------

    @staticmethod
    def qfactor(qtype):
        bits = QBITS.get(str(qtype or "qfloat8").split("|", 1)[0], 8)
        return bits / 16.0 + 0.02

    def w_t(self):
        return self.t_gb * (self.qfactor(self.model.get("qtype")) if self.quantize else self.dt)

    def w_te(self):
        return self.te_gb * (self.qfactor(self.model.get("qtype_te")) if self.quantize_te else self.dt)

    def resident(self, te_on_card):
        return self.w_t() + 0.2 + 0.6 + (self.w_te() if te_on_card else 0.0)

    def latent_frames(self, frames):
        frames = int(frames or 1)
        return 1 + (frames - 1) / float(self.tcomp) if self.video and frames > 1 else 1.0

    def check(self, need, held, frames):
        if need > self.avail:
            raise OOM(need, held, frames)

    # ---- printing ----------------------------------------------------------------------------

    def out(self, line=""):
        if self.bar_open:
            sys.stdout.write("\n")
            self.bar_open = False
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    def bar(self, desc, n, total, post="", rate="1.62s/it"):
        pct = n * 100 // total if total else 0
        full = n * 10 // total if total else 0
        d = desc + ": " if desc else ""
        r = "?it/s" if n == 0 else rate
        left = "?" if n == 0 else "%02d:%02d" % ((total - n) * 2 // 60 % 60, (total - n) * 2 % 60)
        sys.stdout.write("\r%s%3d%%|%s| %d/%d [%02d:%02d<%s, %s%s]" % (
            d, pct, "\u2588" * full + " " * (10 - full), n, total, n * 2 // 60 % 60, n * 2 % 60,
            left, r, post))
        sys.stdout.flush()
        self.bar_open = True

    @staticmethod
    def size(gb):
        if gb <= 0:
            return "0 bytes"
        if gb < 1:
            return "%.2f MiB" % (gb * 1024)
        return "%.2f GiB" % gb

    def oom_message(self, e):
        held = max(min(e.held, self.avail - 0.2), 0.5)
        free = 0.0 if self.other else max(self.capacity - self.other - held - 0.35, 0.02)
        want = max(e.need - held, free + 0.05)
        procs = ""
        if self.other:
            procs += "Process 4242 has %s memory in use. " % self.size(self.other)
        procs += "Process %d has %s memory in use. " % (os.getpid(), self.size(held + 0.3))
        return ("CUDA out of memory. Tried to allocate %s. GPU 0 has a total capacity of %s of "
                "which %s is free. %sOf the allocated memory %s is allocated by PyTorch, and %s "
                "is reserved by PyTorch but unallocated. %s" % (
                    self.size(want), self.size(self.capacity), self.size(free), procs,
                    self.size(held), self.size(0.21), OOM_HINT))

    def traceback(self, frames, last):
        lines = ["Traceback (most recent call last):",
                 '  File "%s/run.py", line 120, in <module>' % ROOT, "    main()",
                 '  File "%s/run.py", line 108, in main' % ROOT, "    raise e",
                 '  File "%s/run.py", line 96, in main' % ROOT, "    job.run()",
                 '  File "%s/jobs/ExtensionJob.py", line 22, in run' % ROOT, "    process.run()"]
        for path, line, fn, src in frames:
            p = path if path.startswith("/") else "%s/%s" % (ROOT, path)
            lines += ['  File "%s", line %d, in %s' % (p, line, fn), "    " + src]
        lines.append(last)
        return lines

    def die(self, msg, frames, last):
        """run.py's answer to an exception: the message, the result box, then the traceback."""
        self.out("Error running job: " + msg)
        # run.py calls on_error here, which writes status 'error' to the UI's database before
        # the traceback is printed; STANDIN_ON_ERROR_SECONDS stands for the time that takes
        time.sleep(float(os.environ.get("STANDIN_ON_ERROR_SECONDS", "0")))
        for line in ("", "========================================", "Result:",
                     " - 0 completed jobs", " - 1 failure", "========================================"):
            self.out(line)
        sys.stderr.write("\n".join(self.traceback(frames, last)) + "\n")
        sys.stderr.flush()
        return 1

    # ---- phases ------------------------------------------------------------------------------

    def echo(self):
        self.out("Running 1 job")
        for line in json.dumps(self.proc, indent=4, default=str).split("\n"):
            self.out(line)
        for line in ("", "#############################################",
                     "# Running job: " + self.name, "#############################################",
                     "", "", "Running  1 process"):
            self.out(line)

    def load(self):
        f_load = [("jobs/process/BaseSDTrainProcess.py", 1790, "run", "self.sd.load_model()")]
        legacy = self.family in ("flux", "sd3", "sdxl", "lumina2")
        where = "toolkit/stable_diffusion_model.py" if legacy else "toolkit/models/base_model.py"
        t_frames = f_load + [(where, 681, "load_model", "transformer.to(self.quantize_device, dtype=dtype)")]
        q_frames = f_load + [(where, 697, "load_model", "quantize(transformer, weights=quantization_type)"),
                             (PKG + "/optimum/quanto/quantize.py", 71, "quantize",
                              "_quantize_submodule(model, name, m)")]
        te_frames = f_load + [(where, 760, "load_model", "text_encoder_2.to(self.device_torch, dtype=dtype)")]
        names = {"flux": ("Loading Flux model", "Quantizing transformer", "Loading T5", "Quantizing T5"),
                 "sd3": ("Loading SD3 model", "Quantizing transformer", "Loading t5", "Quantizing T5"),
                 "wan": ("Loading Wan model", "Quantizing Transformer", "Loading UMT5EncoderModel",
                         "Quantizing UMT5EncoderModel")}
        first, qt, lte, qte = names.get(self.family, ("Loading %s model" % self.arch,
                                                       "Quantizing Transformer", "Text Encoder",
                                                       "Quantizing Text Encoder"))
        if self.family == "sdxl":
            first, lte = "Loading SDXL model", "Loading text encoders"
        self.out(first)
        self.out("Loading transformer" if self.family != "sdxl" else "Loading UNet")
        full_t = self.t_gb * self.dt
        # Without low_vram the 16-bit transformer is moved to the card before it is quantized.
        if not self.low_vram:
            self.check(full_t if self.quantize else self.w_t(), 0.0, t_frames)
        if self.quantize:
            self.out(qt)
            self.out(" - quantizing 57 transformer blocks")
            for n in (0, 19, 38, 57):
                self.bar("", n, 57)
            self.out(" - quantizing extras")
        if self.low_vram and self.family == "wan":
            self.out("Moving transformer to CPU")
        held = self.w_t()
        self.out("Loading VAE" if self.family != "sd3" else "Loading vae")
        self.out(lte)
        if self.low_vram:
            self.check(held + 0.2 + self.w_te(), held, te_frames)
        else:
            self.check(held + 0.2 + (self.te_gb * self.dt if self.quantize_te else self.w_te()),
                       held, te_frames)
        if self.quantize_te:
            self.out(qte)
        if self.family == "flux":
            self.out("Loading CLIP")
        if self.low_vram and self.family == "wan":
            self.out("Moving transformer back to GPU")
        self.out("Making pipe")
        self.out("Preparing Model")
        if self.family not in ("flux", "sd3", "sdxl", "lumina2", "wan"):
            self.out("Model Loaded")
        for line in ("create LoRA network. base dim (rank): 32, alpha: 32",
                     "neuron dropout: p=None, rank dropout: p=None, module dropout: p=None",
                     "create LoRA for Text Encoder: 0 modules.",
                     "create LoRA for U-Net: 494 modules."):
            self.out(line)

    def buckets(self):
        """(dataset index, resolution, batch, frames) for every dataset copy the trainer makes."""
        out = []
        tb = int(self.train.get("batch_size") or 1)
        for i, ds in enumerate(self.datasets):
            ds = ds or {}
            res = ds.get("resolution", 512)
            res = res if isinstance(res, list) else [res]
            b = int(ds.get("batch_size") or tb)
            for r in res:
                out.append((i, int(r), b, int(ds.get("num_frames") or 1)))
        return out

    def datasets_setup(self):
        te_on = not self.low_vram
        f_cache = [("jobs/process/BaseSDTrainProcess.py", 1960, "run",
                    "self.data_loader = get_dataloader_from_datasets("),
                   ("toolkit/data_loader.py", 707, "get_dataloader_from_datasets", "dataset.setup_epoch()"),
                   ("toolkit/dataloader_mixins.py", 1940, "cache_latents_all_latents",
                    "latent = self.sd.encode_images(imgs)"),
                   ("toolkit/models/base_model.py", 880, "encode_images",
                    "latents = self.vae.encode(images).latent_dist.sample()")]
        for i, r, b, frames in self.buckets():
            ds = self.datasets[i] or {}
            folder = str(ds.get("folder_path") or "/data/images")
            if self.fail == "python":
                msg = "[Errno 2] No such file or directory: '%s'" % folder
                return self.die(msg, [("jobs/process/BaseSDTrainProcess.py", 1960, "run",
                                       "self.data_loader = get_dataloader_from_datasets("),
                                      ("toolkit/data_loader.py", 480, "__init__",
                                       "file_list = os.listdir(self.dataset_path)")],
                                "FileNotFoundError: " + msg)
            video = frames > 1
            self.out("Dataset: " + folder)
            self.out("  -  Preprocessing %s dimensions" % ("video" if video else "image"))
            self.bar("", 0, self.images)
            self.bar("", self.images, self.images)
            self.out("  -  Found %d %s" % (self.images, "videos" if video else "images"))
            self.out("Bucket sizes for %s:" % folder)
            self.out("%dx%d%s: %d files" % (r, r, "x%df" % frames if video else "", self.images))
            self.out("1 buckets made")
            if ds.get("cache_latents_to_disk") or ds.get("cache_latents"):
                self.out("Caching latents for " + folder)
                self.out(" - Saving latents to disk" if ds.get("cache_latents_to_disk")
                         else " - Keeping latents in memory")
                self.bar("Caching latents to disk", 0, self.images)
                held = self.resident(te_on)
                vae = 2.0 * (r / 1024.0) ** 2 * self.latent_frames(frames) * self.dt
                self.check(held + vae, held, f_cache)
                self.bar("Caching latents to disk", self.images // 2, self.images)
                self.bar("Caching latents to disk", self.images, self.images)
        if self.train.get("cache_text_embeddings"):
            self.out("Caching text_embeddings for " + str((self.datasets[0] or {}).get("folder_path")))
            self.out(" - Saving text embeddings to disk")
            self.bar("Caching text embeddings to disk", self.images, self.images)
        if self.te_off:
            for line in ("Caching embeddings and unloading text encoder", "",
                         "***** UNLOADING TEXT ENCODER *****"):
                self.out(line)
            if self.train.get("cache_text_embeddings"):
                self.out("Embeddings cached to disk. We dont need the text encoder anymore")
            else:
                self.out("This will train only with a blank prompt or trigger word, if set")
                self.out("If this is not what you want, remove the unload_text_encoder flag")
            self.out("***********************************")
        return 0

    def sample_need(self):
        s = self.sample
        w, h = int(s.get("width") or 512), int(s.get("height") or 512)
        mp = w * h / 1024.0 ** 2
        frames = int(s.get("num_frames") or 1) if self.video else 1
        for it in s.get("samples") or []:
            if isinstance(it, dict):
                pw, ph = int(it.get("width") or w), int(it.get("height") or h)
                mp = max(mp, pw * ph / 1024.0 ** 2)
                if self.video:
                    frames = max(frames, int(it.get("num_frames") or frames))
        ff = self.latent_frames(frames)
        te_on = not self.te_off and not self.low_vram
        held = self.resident(te_on)
        return held + (0.5 * self.act + 1.2) * mp * ff * self.dt, held

    def prompts(self):
        s = self.sample
        n = len(s.get("samples") or s.get("prompts") or [])
        return n or 1

    def sampling(self, baseline):
        legacy = self.family in ("flux", "sd3", "sdxl", "lumina2")
        desc = "Generating Images" if legacy else "Generating Samples"
        n = self.prompts()
        frames = [("jobs/process/BaseSDTrainProcess.py", 2478 if baseline else 2701, "run",
                   "self.sample(self.step_num)"),
                  ("jobs/process/BaseSDTrainProcess.py", 378, "sample",
                   "self.sd.generate_images(gen_img_config_list, sampler=sample_config.sampler)"),
                  ("toolkit/models/base_model.py", 702, "generate_images",
                   "img = self.generate_single_image("),
                  (PKG + "/diffusers/models/autoencoders/autoencoder_kl.py", 323, "decode",
                   "decoded = self._decode(z).sample")]
        self.bar(desc, 0, n)
        need, held = self.sample_need()
        if not baseline:
            need += self.late_sample
        self.check(need, held, frames)
        for k in range(1, n + 1):
            self.bar(desc, k, n)
        if legacy:
            self.out()

    def training(self):
        total = int(self.train.get("steps") or 1000)
        every = int(self.sample.get("sample_every") or 100)
        save_every = int(self.save.get("save_every") or 1000)
        sampling_on = not self.train.get("disable_sampling")
        gc = self.train.get("gradient_checkpointing", True) is not False
        buckets = sorted(self.buckets(), key=lambda b: (b[1] * b[1] * b[2] * b[3]))
        te_on = not self.te_off and not self.low_vram
        latents_cached = all((ds or {}).get("cache_latents_to_disk") or (ds or {}).get("cache_latents")
                             for ds in self.datasets)
        f_train = [("jobs/process/BaseSDTrainProcess.py", 2625, "run",
                    "loss_dict = self.hook_train_loop(batch_list)"),
                   ("extensions_built_in/sd_trainer/SDTrainer.py", 2263, "hook_train_loop",
                    "loss = self.train_single_accumulation(batch)")]
        lr = float(self.train.get("lr") or 1e-4) if not isinstance(self.train.get("lr"), str) else 1e-4
        fails = 0
        self.bar(self.name, 0, total)
        for step in range(1, total + 1):
            # Each bucket in turn, a few steps each, smallest first: a bucket too big for the card
            # shows up as soon as its turn comes.
            _, r, b, frames = buckets[((step - 1) // self.bucket_steps) % len(buckets)]
            held = self.resident(te_on)
            act = self.act * (r / 1024.0) ** 2 * b * self.latent_frames(frames) * self.dt
            act *= 0.25 if gc else 1.0
            if not latents_cached:
                act += 1.0 * (r / 1024.0) ** 2 * self.latent_frames(frames) * self.dt
            if held + act > self.avail:
                fails += 1
                if fails > 3:
                    msg = "OOM during training step 3 times in a row, aborting training"
                    return self.die(msg, f_train[:1], "RuntimeError: " + msg)
                for line in ("", "################################################",
                             "# OOM during training step, skipping batch %d/3 #" % fails,
                             "################################################", ""):
                    self.out(line)
            else:
                fails = 0
            self.bar(self.name, step, total,
                     ", lr: %.1e loss: %.3e" % (lr, 0.3 + (step * 37 % 100) / 1000.0))
            if self.delay:
                time.sleep(self.delay)
            if step % save_every == 0 and step < total:
                self.out()
                self.out("Saving at step %d" % step)
                self.out("Saved checkpoint to %s/output/%s/%s_%09d.safetensors" % (
                    ROOT, self.name, self.name, step))
            if sampling_on and step % every == 0 and step < total:
                try:
                    self.sampling(False)
                except OOM as e:
                    return self.die(self.oom_message(e), e.frames,
                                    "torch.OutOfMemoryError: " + self.oom_message(e))
        self.out()
        self.out("Saved checkpoint to %s/output/%s/%s.safetensors" % (ROOT, self.name, self.name))
        if sampling_on:
            try:
                self.sampling(False)
            except OOM as e:
                return self.die(self.oom_message(e), e.frames,
                                "torch.OutOfMemoryError: " + self.oom_message(e))
        return 0

    def run(self):
        self.echo()
        try:
            self.load()
            rc = self.datasets_setup()
            if rc:
                return rc
            if not self.train.get("disable_sampling"):
                if self.train.get("skip_first_sample"):
                    self.out("Skipping first sample due to config setting")
                else:
                    self.out("Generating baseline samples before training")
                    self.sampling(True)
        except OOM as e:
            return self.die(self.oom_message(e), e.frames,
                            "torch.OutOfMemoryError: " + self.oom_message(e))
        return self.training()


def read_job(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith((".json", ".jsonc")) or yaml is None:
        return json.loads(text)
    return yaml.safe_load(text)


def main(argv):
    args = {"vram": float(os.environ.get("STANDIN_VRAM_GB", "24")), "other": 0.0,
            "delay": float(os.environ.get("STANDIN_DELAY", "0")), "fail": None, "images": 8,
            "bucket_steps": 4, "late_sample": 0.0}
    rest = []
    i = 0
    while i < len(argv):
        a = argv[i]
        opt = {"--vram": "vram", "--other-process": "other", "--delay": "delay", "--fail": "fail",
               "--images": "images", "--bucket-steps": "bucket_steps",
               "--late-sample": "late_sample"}.get(a)
        if opt and i + 1 < len(argv):
            v = argv[i + 1]
            args[opt] = v if opt == "fail" else int(v) if opt in ("images", "bucket_steps") else float(v)
            i += 2
            continue
        rest.append(a)
        i += 1
    if len(rest) != 1:
        sys.stderr.write(__doc__)
        return 2
    if os.environ.get("STANDIN_PID_FILE"):
        with open(os.environ["STANDIN_PID_FILE"], "w") as f:
            f.write("%d\n" % os.getpid())
    job = read_job(rest[0])
    st = Stand(job, args["vram"], args["other"], args["delay"], args["fail"], args["images"],
               args["bucket_steps"], args["late_sample"])
    try:
        return st.run()
    except KeyboardInterrupt:
        # run.py: a Ctrl-C stops the job and exits 0
        st.out("")
        st.out("========================================")
        st.out("Job stopped")
        st.out("========================================")
        return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
