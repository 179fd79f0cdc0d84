/* gpuwatch.h — what a followed run holds on the card, phase by phase (SPEC §12.2).
 *
 * While oomfix follows a run (diagnose --follow, retry, the UI), it asks nvidia-smi at most once a
 * second which processes hold the card and how much, and keeps the peak of the trainer's
 * processes in each phase the run's log shows. The trainer's processes are the one oomfix started
 * and its descendants (retry), and any process that has the run's log open (the web UI's worker
 * points the trainer's output at log.txt; `python run.py job.yaml > log` too). Others on the card
 * are not counted. When the run ends the peaks are kept in the measurement store, for the next
 * estimate of the job: a phase the run went through and left is a peak; the phase it was in when
 * it stopped (and training when it did not finish) only a lower bound.
 *
 * Nothing here waits: nvidia-smi runs beside the follower, its answer is read when it is there,
 * and one that has not answered in 10 s is stopped. Without nvidia-smi (or with the measurements
 * off) the watch does nothing.
 */
#ifndef OOMFIX_GPUWATCH_H
#define OOMFIX_GPUWATCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "oomfix/diag.h"
#include "oomfix/estimate.h"
#include "oomfix/job.h"

struct gpuwatch;

/* Watches the run writing `log` (it may not exist yet); root is the pid of the process oomfix
 * started for it, or 0. j (may be NULL) gives the diagnosis its job. NULL when out of memory. */
struct gpuwatch *gpuwatch_new(const char *log, pid_t root, const struct diag_job_info *j);

/* The trainer's pid once it is known (a web UI job: the worker writes it to the job's row). */
void gpuwatch_set_root(struct gpuwatch *w, pid_t root);

/* Called at the follower's pace (several times a second is fine): reads nvidia-smi's answer when
 * it has come, and starts the next query when a second has passed since the last. */
void gpuwatch_tick(struct gpuwatch *w);

/* The peak of the trainer's processes in phase p so far (bytes), -1 when none was seen. */
int64_t gpuwatch_peak(const struct gpuwatch *w, enum est_phase p);
/* nvidia-smi's answers read so far. */
unsigned gpuwatch_answers(const struct gpuwatch *w);

/* Reads the log to its end and keeps each phase's peak in the measurement store, keyed by the
 * job j's settings (nothing when j is NULL); returns how many phases were kept. `finished`: the
 * run is known to have ended well (its command exited 0, the web UI says completed), besides
 * what its log says. */
int gpuwatch_record(struct gpuwatch *w, const struct job *j, bool finished);

/* Stops a query still running. */
void gpuwatch_free(struct gpuwatch **w);

#endif
