#!/usr/bin/env python3
"""Writes the diag test cases under tests/diag/cases-verdicts/ (train.log + expect.json each).

The logs are small, invented trainer runs, one per rule or trap of the diagnosis. They are
committed; run this again after changing a case and review the diff.

expect.json: "args" are extra diag_run arguments (job facts, segment cap); the other keys are
compared with diag_run's JSON ("signatures" as a sorted set of ids, "counts" per id).
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "cases-verdicts")

OOM_MSG = ("CUDA out of memory. Tried to allocate {alloc}. GPU 0 has a total capacity of "
           "23.64 GiB of which {free} is free. Process 4242 has 22.10 GiB memory in use. Of the "
           "allocated memory 21.30 GiB is allocated by PyTorch, and 410.22 MiB is reserved by "
           "PyTorch but unallocated. If reserved but unallocated memory is large try setting "
           "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See "
           "documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html"
           "#environment-variables)")


def oom(alloc="1.50 GiB", free="312.44 MiB"):
    return OOM_MSG.format(alloc=alloc, free=free)


def echo(name, prompts=("a red bicycle by a canal",), folder="/srv/data/bikes"):
    lines = ["Running 1 job", "{", '    "type": "sd_trainer",', '    "training_folder": "out",',
             '    "datasets": [', "        {", '            "folder_path": "%s",' % folder,
             '            "resolution": [', "                512,", "                768",
             "            ]", "        }", "    ],", '    "sample": {', '        "prompts": [']
    lines += ['            "%s",' % p for p in prompts[:-1]]
    lines += ['            "%s"' % prompts[-1], "        ]", "    }", "}", "",
              "#############################################", "# Running job: %s" % name,
              "#############################################", "", "", "Running  1 process"]
    return lines


def load(model="Flux"):
    return ["Loading %s model" % model, "Loading transformer", "Quantizing transformer",
            "Loading T5", "Quantizing T5", "Loading VAE", "Making pipe", "Preparing Model",
            "create LoRA network. base dim (rank): 16, alpha: 16",
            "create LoRA for U-Net: 494 modules."]


def caching(folder="/srv/data/bikes"):
    return ["Dataset: %s" % folder, "  -  Preprocessing image dimensions",
            "\r  0%|          | 0/20 [00:00<?, ?it/s]\r100%|##########| 20/20 [00:00<00:00, 800.00it/s]",
            "  -  Found 20 images", "Bucket sizes for %s:" % folder, "512x512: 20 files",
            "1 buckets made", "Caching latents for %s" % folder, " - Saving latents to disk",
            "\rCaching latents to disk:   0%|          | 0/20 [00:00<?, ?it/s]"
            "\rCaching latents to disk: 100%|##########| 20/20 [00:05<00:00,  4.00it/s]"]


def frame(name, n, total, loss=True):
    pct = n * 100 // total
    post = ", lr: 1.0e-04 loss: 3.1%02de-01" % (n % 97) if loss and n > 0 else ""
    return "%s:  %2d%%|#         | %d/%d [00:%02d<10:00,  1.50s/it%s]" % (name, pct, n, total,
                                                                     n % 60, post)


def bars(name, a, b, total):
    """Frames a..b joined by \\r on one physical line, as a terminal capture has them."""
    return "".join("\r" + frame(name, n, total) for n in range(a, b + 1))


def ejr_box(msg):
    return ["Error running job: " + msg, "", "========================================",
            "Result:", " - 0 completed jobs", " - 1 failure",
            "========================================"]


def tb(frames, last):
    out = ["Traceback (most recent call last):",
           '  File "/opt/aitk/run.py", line 120, in main', "    job.run()",
           '  File "/opt/aitk/jobs/ExtensionJob.py", line 22, in run', "    process.run()"]
    for f, src in frames:
        out += ['  File "/opt/aitk/%s' % f, "    " + src]
    return out + [last]


def skip(k):
    return ["", "################################################",
            "# OOM during training step, skipping batch %d/3 #" % k,
            "################################################", ""]


TRAIN_FRAMES = [("jobs/process/BaseSDTrainProcess.py\", line 2625, in run",
                 "loss_dict = self.hook_train_loop(batch_list)"),
                ("extensions_built_in/sd_trainer/SDTrainer.py\", line 2263, in hook_train_loop",
                 "loss = self.train_single_accumulation(batch)")]
SAMPLE_FRAMES = [("jobs/process/BaseSDTrainProcess.py\", line 378, in sample",
                  "self.sd.generate_images(gen_img_config_list, sampler=sample_config.sampler)"),
                 ("toolkit/stable_diffusion_model.py\", line 1597, in generate_images",
                  "img = pipeline(")]

cases = {}


def case(name, lines, expect, raw=None):
    data = raw if raw is not None else ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape")
    cases[name] = (data, expect)


def exp(oom, timing, phase, step, sigs, other=None, kind=None, args=(), **more):
    d = {"args": list(args), "oom": oom, "timing": timing, "phase": phase, "failed_step": step,
         "signatures": sorted(sigs), "other_failure": other, "model_kind": kind}
    d.update(more)
    return d


JOB = ["--name", "bikes_v1", "--kind", "1", "--conservative", "0"]
N = "bikes_v1"

# A in model_load: the OOM comes while the transformer is moved to the GPU.
case("a-model-load",
     echo(N) + ["Loading Flux model", "Loading transformer",
                "\rLoading checkpoint shards:   0%|          | 0/3 [00:00<?, ?it/s]"
                "\rLoading checkpoint shards:  67%|######6   | 2/3 [00:09<00:04,  4.50s/it]"]
     + ejr_box(oom()) + tb([("toolkit/stable_diffusion_model.py\", line 700, in load_model",
                             "transformer.to(self.device_torch, dtype=dtype)")],
                           "torch.OutOfMemoryError: " + oom()),
     exp(True, "before_training", "model_load", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate"], kind="image", args=JOB,
         counts={"cuda_oom": 1, "torch_oom": 1}))

# A in caching: VAE encode of the latents.
case("a-caching",
     echo(N) + load() + caching()[:-1] + [
         "\rCaching latents to disk:   0%|          | 0/20 [00:00<?, ?it/s]"
         "\rCaching latents to disk:  35%|###5      | 7/20 [00:02<00:04,  3.00it/s]"]
     + ejr_box(oom("6.00 GiB")) + tb([("toolkit/dataloader_mixins.py\", line 1940, in cache_latents_all_latents",
                                       "latent = self.sd.encode_images(imgs)"),
                                      ("toolkit/stable_diffusion_model.py\", line 2400, in encode_images",
                                       "latents = self.vae.encode(images).latent_dist.sample()")],
                                     "torch.OutOfMemoryError: " + oom("6.00 GiB")),
     exp(True, "before_training", "caching", None, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB))

# A in baseline sampling, with the sampling bar the only sign (no header line).
case("a-baseline-bar-only",
     echo(N) + load() + caching() + ["\rGenerating Samples:   0%|          | 0/2 [00:00<?, ?it/s]"]
     + ejr_box(oom()) + tb(SAMPLE_FRAMES, "torch.OutOfMemoryError: " + oom()),
     exp(True, "before_training", "baseline_sampling", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate"], kind="image", args=JOB))

# B: stderr-only style, the traceback glued to the training bar (no "Error running job").
case("b-bar-glued-traceback",
     echo(N) + load() + caching() + ["Skipping first sample due to config setting",
                                     bars(N, 0, 2, 1000) + "Traceback (most recent call last):"]
     + tb(TRAIN_FRAMES, "torch.OutOfMemoryError: " + oom())[1:],
     exp(True, "first_steps", "training", 3, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB, total_steps=1000))

# C: periodic sample after a save, legacy "Generating Images" bar.
case("c-sampling-after-save",
     echo(N) + load() + caching() + [bars(N, 0, 500, 2000), "", "Saving at step 500",
                                     "Saved checkpoint to out/bikes_v1/bikes_v1_000000500.safetensors",
                                     "\rGenerating Images:   0%|          | 0/4 [00:00<?, ?it/s]"
                                     "\rGenerating Images:  25%|##5       | 1/4 [00:09<00:27,  9.00s/it]"
                                     + "Error running job: " + oom()]
     + ejr_box(oom())[1:] + tb(SAMPLE_FRAMES, "torch.OutOfMemoryError: " + oom()),
     exp(True, "sampling", "sampling", 500, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB))

# D: a fatal OOM at step 41 of a run that was going well.
case("d-fatal-late",
     echo(N) + load() + caching() + [bars(N, 0, 40, 1000) + "Error running job: " + oom("80.00 MiB")]
     + ejr_box(oom())[1:] + tb(TRAIN_FRAMES, "torch.OutOfMemoryError: " + oom("80.00 MiB")),
     exp(True, "intermittent", "training", 41, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB))

# D without a fatal error: skip banners, then the run recovers and finishes.
case("d-skips-survived",
     echo(N) + load() + caching() + [bars(N, 0, 120, 300)] + skip(1) + [bars(N, 121, 200, 300)]
     + skip(1) + [bars(N, 201, 201, 300)] + skip(2)
     + [bars(N, 202, 300, 300), "Saved checkpoint to out/bikes_v1/bikes_v1.safetensors"],
     exp(True, "intermittent", "training", 202, ["oom_skip"], kind="image", args=JOB,
         counts={"oom_skip": 3}))

# E: a conservative job that runs out of memory while loading, with 0 bytes free.
ZERO = oom("20.00 MiB", "0 bytes")
E_LOG = echo(N) + load()[:2] + ejr_box(ZERO) + tb(
    [("toolkit/stable_diffusion_model.py\", line 700, in load_model", "transformer.to(device)")],
    "torch.OutOfMemoryError: " + ZERO)
case("e-environment-zero-free", E_LOG,
     exp(True, "environment", "model_load", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate", "zero_bytes_free"], kind="image",
         args=["--name", N, "--kind", "1", "--conservative", "1"]))
# The same log with a job that is not conservative is A, not E.
case("e-not-conservative-is-a", E_LOG,
     exp(True, "before_training", "model_load", None,
         ["cuda_oom", "torch_oom", "tried_to_allocate", "zero_bytes_free"], kind="image",
         args=JOB))
# cuBLAS in step 1 of a conservative job.
case("e-cublas-step-1",
     echo(N) + load() + caching() + [bars(N, 0, 0, 1500)]
     + ejr_box("CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")
     + tb(TRAIN_FRAMES, "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling "
          "`cublasCreate(handle)`"),
     exp(True, "environment", "training", 1, ["cublas_alloc_failed"], kind="video",
         args=["--name", N, "--kind", "2", "--conservative", "1"]))

# Saving: the OOM comes in the checkpoint save at step 250.
case("saving",
     echo(N) + load() + caching() + [bars(N, 0, 250, 1000), "", "Saving at step 250"]
     + ejr_box(oom()) + tb([("jobs/process/BaseSDTrainProcess.py\", line 2715, in run",
                             "self.save(self.step_num)"),
                            ("jobs/process/BaseSDTrainProcess.py\", line 690, in save",
                             "self.network.save_weights(file_path)")],
                           "torch.OutOfMemoryError: " + oom()),
     exp(True, "intermittent", "saving", 250, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB))

# A whole run on one physical line: every message and frame joined by \r, no newline at all.
one = "\r".join(["Loading transformer", "Preparing Model", "Caching latents for /srv/data/bikes"])
one += bars(N, 0, 7, 100) + "Error running job: " + oom("2.00 GiB")
case("one-physical-line", None,
     exp(True, "first_steps", "training", 8, ["cuda_oom", "tried_to_allocate"], args=JOB,
         kind="image", lines=1),
     raw=one.encode())

# Chained exceptions: the OOM, then an error while handling it; one failure, in sampling.
case("chained-exceptions",
     echo(N) + load() + caching() + [bars(N, 0, 250, 1000),
                                     "\rGenerating Samples:   0%|          | 0/2 [00:00<?, ?it/s]"]
     + ejr_box("cannot free the pipeline") + tb(SAMPLE_FRAMES, "torch.OutOfMemoryError: " + oom())
     + ["", "During handling of the above exception, another exception occurred:", ""]
     + tb([("jobs/process/BaseSDTrainProcess.py\", line 390, in sample", "self.sd.unload()")],
          "RuntimeError: cannot free the pipeline"),
     exp(True, "sampling", "sampling", 250, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB))

# Duplicated stderr: every error line twice (two handlers on one stream).
dup = []
for l in ejr_box(oom()) + tb(TRAIN_FRAMES, "torch.OutOfMemoryError: " + oom()):
    dup += [l, l]
case("duplicated-stderr",
     echo(N) + load() + caching() + [bars(N, 0, 3, 1000)] + dup,
     exp(True, "first_steps", "training", 4, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB, counts={"cuda_oom": 1, "torch_oom": 1, "tried_to_allocate": 1}))

# CRLF endings, ANSI colour inside the message, ESC[A after the bars.
ansi = echo(N) + load() + caching() + [bars(N, 0, 5, 800) + "\x1b[A", "\x1b[A\x1b[2K" + bars(N, 6, 12, 800)]
ansi += ["\x1b[1;31mError running job:\x1b[0m " + oom().replace("out of memory", "out of\x1b[0m memory")]
ansi += ejr_box(oom())[1:] + ["\x1b[31m" + l + "\x1b[0m" for l in tb(TRAIN_FRAMES, "torch.OutOfMemoryError: " + oom())]
case("crlf-ansi", None,
     exp(True, "intermittent", "training", 13, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB),
     raw=("\r\n".join(ansi) + "\r\n").encode())

# Invalid UTF-8 and NUL bytes in bars and around the message.
bad = ("\n".join(echo(N) + load() + caching()) + "\n").encode()
bad += ("\r" + frame(N, 0, 500)).encode() + b"\r\xff\xfe\x00\x00garbage \xc3(\xa0\xa1\n"
bad += (bars(N, 1, 4, 500)).encode() + b"\x00\n"
bad += b"\xe2\x28\xa1 Error running job: \x00" + oom().encode() + b" \xff\n"
bad += b"torch.OutOfMemoryError: " + oom().encode() + b"\xc0\xaf\n"
case("invalid-utf8-nul", None,
     exp(True, "first_steps", "training", 5, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind="image", args=JOB),
     raw=bad)

# stderr only: bars and the traceback, no trainer messages and no job (model_kind null).
case("stderr-only-no-job",
     [bars("mystery_run", 0, 30, 3000)] + tb(TRAIN_FRAMES, "torch.OutOfMemoryError: " + oom()),
     exp(True, "intermittent", "training", 31, ["cuda_oom", "torch_oom", "tried_to_allocate"],
         kind=None, total_steps=3000))

# Decoys only: prompts in the echo, YAML comments, oom_tests, the expandable_segments hint.
decoy_prompts = ("a sign that says CUDA out of memory", "torch.OutOfMemoryError on a t-shirt",
                 "OOM during training step, skipping batch 1/3 written on a wall",
                 "Out of memory: Killed process, a film poster")
case("decoys-clean-run",
     echo(N, decoy_prompts, "/srv/data/oom_tests/bikes")
     + ["# job.yaml as run by the wrapper:", "# batch_size was 4 before: CUDA out of memory",
        "  batch_size: 1  # 2 gave torch.OutOfMemoryError", "  gradient_checkpointing: true",
        "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"]
     + load() + caching("/srv/data/oom_tests/bikes") + [bars(N, 0, 100, 100),
                                                       "Saved checkpoint to out/bikes_v1/bikes_v1.safetensors"],
     exp(False, None, None, None, [], kind="image", args=JOB, total_steps=100))

# Host RAM: the shell's Killed and exit code 137, no CUDA message.
case("host-killed-137",
     echo(N) + ["Loading Flux model", "Loading transformer",
                "\rLoading checkpoint shards:  33%|###3      | 1/3 [00:20<00:40, 20.00s/it]",
                "./train.sh: line 7: 91234 Killed                  python run.py job.yaml",
                "training exited with exit code 137"],
     exp(False, None, None, None, [], other="host_oom", kind="image", args=JOB))

case("hf-auth",
     echo(N) + ["Loading Flux model"] + ejr_box("401 Client Error. (Request ID: Root=1-abc)")
     + tb([("toolkit/stable_diffusion_model.py\", line 650, in load_model", "hf_hub_download(...)")],
          "huggingface_hub.errors.GatedRepoError: 401 Client Error. (Request ID: Root=1-abc)"),
     exp(False, None, None, None, [], other="hf_auth", kind="image", args=JOB))

case("config-error-yaml",
     ["Traceback (most recent call last):", '  File "/opt/aitk/run.py", line 90, in main',
      "    config = get_config(args.config_file_list[0])",
      "yaml.scanner.ScannerError: mapping values are not allowed here",
      '  in "config/bikes.yaml", line 12, column 14'],
     exp(False, None, None, None, [], other="config_error"))

case("python-error-keyerror",
     echo(N) + load() + caching() + [bars(N, 0, 12, 1000) + "Error running job: 'caption'"]
     + ejr_box("'caption'")[1:] + tb(TRAIN_FRAMES, "KeyError: 'caption'"),
     exp(False, None, None, None, [], other="python_error", kind="image", args=JOB))

# A log appended to by a retry: the first run ran out of memory, the second lost its dataset.
case("two-runs-last-counts",
     echo(N) + load() + ejr_box(oom()) + tb([("x.py\", line 1, in load_model", "x()")],
                                            "torch.OutOfMemoryError: " + oom())
     + echo(N) + load() + ejr_box("[Errno 2] No such file or directory: '/srv/data/bikes'")
     + tb([("toolkit/data_loader.py\", line 80, in __init__", "open(path)")],
          "FileNotFoundError: [Errno 2] No such file or directory: '/srv/data/bikes'"),
     exp(False, None, None, None, [], other="missing_file", kind="image", args=JOB))

case("empty", None, exp(False, None, None, None, [], lines=0), raw=b"")

# A binary file: deterministic bytes from a small LCG, NULs included.
x, blob = 12345, bytearray()
for _ in range(20000):
    x = (x * 1103515245 + 12345) & 0x7FFFFFFF
    blob.append((x >> 16) & 0xFF)
# Not a text log: refused with exit 65 (SPEC §3.6), no verdict.
case("binary", None, exp(False, None, None, None, [], exit=65), raw=bytes(blob))

# One line longer than the segment cap (4 KiB here): read in pieces, the message still found.
pad = ("x" * 4095 + "\t") * 70
case("long-line-capped", None,
     exp(True, "first_steps", "training", 3, ["cuda_oom", "tried_to_allocate"], args=JOB + ["--cap", "4096"],
         kind="image", lines=2),
     raw=(bars(N, 0, 2, 90) + "\n" + pad + "RuntimeError: " + oom()).encode())


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, (data, expect) in sorted(cases.items()):
        d = os.path.join(OUT, name)
        os.makedirs(d, exist_ok=True)
        if data is None:
            raise SystemExit("case %s has no log" % name)
        with open(os.path.join(d, "train.log"), "wb") as f:
            f.write(data)
        with open(os.path.join(d, "expect.json"), "w") as f:
            json.dump(expect, f, indent=2, sort_keys=True)
            f.write("\n")
    print("%d cases written to %s" % (len(cases), OUT), file=sys.stderr)


if __name__ == "__main__":
    main()
