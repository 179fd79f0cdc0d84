/* cli.h — the subcommands. Each takes argv after the subcommand name's position (argv[0] is the
 * subcommand) and returns a sysexits code. */
#ifndef OOMFIX_CLI_H
#define OOMFIX_CLI_H

#include <stdbool.h>
#include <stdio.h>

/* `oomfix --version` (version.c): prints the version, the libraries' versions, PCRE2 JIT and
 * the data directory to fp; returns 0, or 74 when writing failed. */
int cli_version(FILE *fp);

int cmd_get(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_diagnose(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_fix(int argc, char **argv);
int cmd_retry(int argc, char **argv);
int cmd_jobs(int argc, char **argv);
int cmd_queue(int argc, char **argv);
int cmd_restore(int argc, char **argv);
int cmd_runs(int argc, char **argv);
int cmd_estimate(int argc, char **argv);
int cmd_measurements(int argc, char **argv);

/* Shared by the subcommands (cmd_aitk.c). */
struct source;
struct doc;
struct job;
struct err;
/* Opens a job given as a path or aitk:NAME: its source, its document and (when j is not NULL)
 * its typed view. On failure nothing is left allocated. */
int cli_open_job(const char *arg, struct source **s, struct doc **d, struct job **j,
		 struct err *e);
/* The log to use when none was given: a web UI job's current log.txt (an error names the
 * folder when it does not exist); NULL for a file job. */
int cli_job_log(const struct source *s, const char **log, struct err *e);
/* Prints a failed source_save's error (with the "use --force" hint for a file). Returns its code. */
int cli_save_failed(const struct source *s, const struct err *e);

/* The estimate before the run beside a diagnosis (cmd_estimate.c; plan and diagnose --job): the
 * peak with its band, the verdict on the card of the OOM message when v has one, and what the
 * failed run held next to the estimate of its phase. j or v may be NULL (then nothing, or no
 * comparison). */
struct diag_result;
struct json;
void cli_estimate_text(const struct job *j, const struct diag_result *v);
/* Keeps what the OOM of `log` measured of job j (SPEC §12.2) and says a problem with the store
 * once, on stderr; never fails. */
struct source;
void cli_measure(const struct source *src, const struct job *j, const struct diag_result *v,
		 const char *log);
void cli_estimate_json(struct json *js, const struct job *j, const struct diag_result *v);

/* The width reports are wrapped to (cmd_diag.c): the terminal's, kept within 60..100; 80 when
 * stdout is not a terminal. */
int cli_report_width(void);
/* The columns of the terminal stdout is, or 0 when it is not one (a pipe, a file). */
int cli_tty_columns(void);
/* Prints text wrapped in display cells: the first line in `first` cells (the cursor is already
 * where it starts), the others after `indent` blanks in `width - indent` cells. With `items` the
 * text is a list (「、」/"; " between items) and each item wraps as a unit (text_wrap_items).
 * Spaces after 「。」 where code joined two sentences are dropped. */
void cli_put_wrapped(const char *text, int first, int indent, int width, bool items);

/* "(does not help this failure)", in the language's parentheses (cmd_diag.c). */
const char *cli_no_help_note(void);

/* `diagnose --follow` (cmd_follow.c): job may be NULL. */
struct diag_job_info;
struct diag_result;
/* The exit status of a followed run that ended: 0 without a GPU out-of-memory, 10-14 for an OOM
 * of timing A-E, 15 for an OOM whose timing the log does not show. */
int cli_follow_status(const struct diag_result *r);
/* src (may be NULL): a web UI job, whose status is followed too. j (may be NULL): the job, whose
 * run is watched through nvidia-smi and whose measurements are kept when it ends (SPEC §12.2). */
int cli_diagnose_follow(const char *log, const struct diag_job_info *job, struct source *src,
			const struct job *j, bool as_json);

#endif
