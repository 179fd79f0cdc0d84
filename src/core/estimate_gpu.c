/* estimate_gpu.c — the cards nvidia-smi sees and the processes holding them (SPEC §12), for the
 * estimate's card. The one part of the estimate that runs a program; its answers are read by
 * estimate_parse_smi (estimate_card.c), which tests feed directly. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oomfix/buf.h"
#include "oomfix/estimate.h"
#include "oomfix/i18n.h"

/* Runs nvidia-smi with `arg1` and `arg2` and keeps its standard output (malloc'd, NUL-ended).
 * Returns 0, 1 when it is not installed, 2 when it failed (status or signal). */
static int run_smi(const char *arg1, const char *arg2, char **out)
{
	int fd[2];
	*out = NULL;
	if (pipe(fd))
		return 2;
	pid_t pid = fork();
	if (pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return 2;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		dup2(fd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		close(fd[0]);
		close(fd[1]);
		execlp("nvidia-smi", "nvidia-smi", arg1, arg2, (char *)NULL);
		_exit(errno == ENOENT ? 127 : 126);
	}
	close(fd[1]);
	char *buf;
	size_t len;
	/* Over a megabyte of card lines (EFBIG) keeps the first megabyte; other errors leave
	 * buf NULL. */
	(void)read_all(fd[0], 1u << 20, &buf, &len);
	close(fd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (!buf)
		return 2;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 127) {
		free(buf);
		return 1;
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		free(buf);
		return 2;
	}
	*out = buf;
	return 0;
}

int estimate_query_gpus(struct est_gpus *out, struct err *e)
{
	char *gpus = NULL, *apps = NULL;
	memset(out, 0, sizeof *out);
	int s = run_smi("--query-gpu=index,uuid,name,memory.total,memory.used",
			"--format=csv,noheader,nounits", &gpus);
	if (s == 1) {
		err_set(e, ERR_UNAVAILABLE, NULL, 0, 0, "%s", _("nvidia-smi is not installed"));
		return ERR_UNAVAILABLE;
	}
	if (s) {
		err_set(e, ERR_IOERR, NULL, 0, 0, "%s", _("nvidia-smi failed"));
		return ERR_IOERR;
	}
	if (run_smi("--query-compute-apps=gpu_uuid,pid,used_memory", "--format=csv,noheader,nounits",
		    &apps))
		apps = NULL; /* the cards without their processes */
	int rc = estimate_parse_smi(gpus, apps, out, e);
	free(gpus);
	free(apps);
	return rc;
}
