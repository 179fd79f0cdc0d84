#!/usr/bin/env python3
"""Writes a realistic AI Toolkit terminal log of about SIZE bytes that ends in a late OOM.

  gen_log.py SIZE_MB OUT

Config echo, model load, latent caching, a baseline sample, then training: one tqdm frame per
step joined by \\r on one physical line (as `run.py -l` captures it), a save every 250 steps,
a sample round after each save, one OOM skip the run survives, and finally a fatal CUDA OOM in
a training step with the "Error running job:" line glued to the bar and the traceback.
"""
import sys

NAME = "bench_lora_v1"
OOM = ("CUDA out of memory. Tried to allocate 1.25 GiB. GPU 0 has a total capacity of 23.55 GiB "
       "of which 402.44 MiB is free. Process 31337 has 23.14 GiB memory in use. Of the allocated "
       "memory 22.10 GiB is allocated by PyTorch, and 610.11 MiB is reserved by PyTorch but "
       "unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.")


def head(total):
    h = ["Running 1 job", "{", '    "type": "sd_trainer",', '    "sample": {',
         '        "prompts": [', '            "a poster that says CUDA out of memory",',
         '            "a cat in a box"', "        ]", "    }", "}", "",
         "#" * 45, "# Running job: " + NAME, "#" * 45, "", "", "Running  1 process",
         "Loading Flux model", "Loading transformer", "Quantizing transformer", "Loading T5",
         "Quantizing T5", "Loading VAE", "Making pipe", "Preparing Model",
         "create LoRA for U-Net: 494 modules.", "Dataset: /data/bench",
         "  -  Preprocessing image dimensions", "  -  Found 40 images",
         "Caching latents for /data/bench", " - Saving latents to disk"]
    h.append("".join("\rCaching latents to disk: %3d%%|#####     | %d/40 [00:%02d<00:10,  4.00it/s]"
                     % (i * 100 // 40, i, i) for i in range(41)))
    h.append("Generating baseline samples before training")
    h.append("".join("\rGenerating Samples: %3d%%|###       | %d/4 [00:%02d<00:30, 10.00s/it]"
                     % (i * 25, i, i * 10) for i in range(5)))
    return "\n".join(h) + "\n"


def frame(n, total):
    return "\r%s: %3d%%|#####     | %d/%d [%d:%02d:%02d<9:59:59,  1.67s/it, lr: 1.0e-04 loss: %d.%03de-01]" % (
        NAME, n * 100 // total, n, total, n // 3600, n // 60 % 60, n % 60, 1 + n % 9, n % 1000)


def main():
    size = int(sys.argv[1]) * 1024 * 1024
    out = open(sys.argv[2], "w", encoding="utf-8", newline="")
    total = 100_000_000
    written = 0
    buf = [head(total)]
    n = 0
    skip_done = False
    while True:
        n += 1
        buf.append(frame(n, total))
        if n % 250 == 0:
            buf.append("\n\nSaving at step %d\nSaved checkpoint to output/%s/%s_%09d.safetensors\n"
                       "Saved optimizer to output/%s/optimizer.pt\n" % (n, NAME, NAME, n, NAME))
            buf.append("".join("\rGenerating Samples: %3d%%|###       | %d/4 [00:%02d<00:30, 10.00s/it]"
                               % (i * 25, i, i * 10) for i in range(5)) + "\n")
        if len(buf) >= 4096:
            s = "".join(buf)
            out.write(s)
            written += len(s)
            buf = []
            if not skip_done and written > size // 2:
                out.write("\n\n" + "#" * 48 + "\n# OOM during training step, skipping batch 1/3 #\n"
                          + "#" * 48 + "\n\n")
                skip_done = True
            if written >= size:
                break
    out.write("".join(buf) + "Error running job: " + OOM + "\n\n" + "=" * 40 +
              "\nResult:\n - 0 completed jobs\n - 1 failure\n" + "=" * 40 + "\n")
    out.write("Traceback (most recent call last):\n"
              '  File "/opt/ai-toolkit/run.py", line 120, in main\n    job.run()\n'
              '  File "/opt/ai-toolkit/jobs/process/BaseSDTrainProcess.py", line 2625, in run\n'
              "    loss_dict = self.hook_train_loop(batch_list)\n"
              "torch.OutOfMemoryError: " + OOM + "\n")
    out.close()
    print(n + 1, file=sys.stderr)  # the step that failed


if __name__ == "__main__":
    main()
