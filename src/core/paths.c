/* paths.c — see paths.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oomfix/paths.h"

static char share[PATH_MAX];
static int share_state; /* 0 not looked yet, 1 found, -1 none */

/* Strips the last path component in place; false when there is none left to strip. */
static bool up(char *p)
{
	char *s = strrchr(p, '/');
	if (!s || s == p)
		return false;
	*s = '\0';
	return true;
}

const char *paths_share_dir(void)
{
	char exe[PATH_MAX], probe[PATH_MAX + 16];
	struct stat st;

	if (share_state)
		return share_state > 0 ? share : NULL;
	share_state = -1;
	/* /proc/self/exe is the binary itself, symlinks resolved: a link in ~/bin to an unpacked
	 * release still finds the release's share/. */
	ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
	if (n <= 0 || (size_t)n >= sizeof exe - 1)
		return NULL;
	exe[n] = '\0';
	if (!up(exe) || !up(exe)) /* .../bin/oomfix -> ... */
		return NULL;
	if ((size_t)snprintf(share, sizeof share, "%s/share", exe) >= sizeof share)
		return NULL;
	snprintf(probe, sizeof probe, "%s/oomfix", share);
	if (stat(probe, &st) != 0 || !S_ISDIR(st.st_mode))
		return NULL;
	share_state = 1;
	return share;
}

bool paths_share_file(const char *rel, char *out, size_t outsz)
{
	const char *s = paths_share_dir();
	struct stat st;

	if (!s || (size_t)snprintf(out, outsz, "%s/%s", s, rel) >= outsz)
		return false;
	return stat(out, &st) == 0;
}
