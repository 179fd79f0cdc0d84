/* i18n.c — the locale and the message catalogues, found wherever oomfix was unpacked.
 *
 * A release binary is linked statically against glibc, which still reads locales from the
 * running system (the locale archive or /usr/lib/locale). A bare container or cluster node may
 * have none, not even C.UTF-8 (glibc builds it like any other locale, it is not compiled in), so
 * the release carries the C.UTF-8 locale it was built with in share/oomfix/locale and loads it
 * through LOCPATH when the system cannot supply the UTF-8 locale the user asked for. The
 * catalogues then come through LANGUAGE, which gettext reads whenever the locale is not "C".
 */
#include <errno.h>
#include <locale.h>
#include <stdio.h>
#include <langinfo.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "oomfix/i18n.h"
#include "lang.h"
#include "oomfix/paths.h"

/* The value the user set for a category, in setlocale's order of precedence. */
static const char *requested(const char *category_var)
{
	const char *v = getenv("LC_ALL");
	if (v && *v)
		return v;
	v = getenv(category_var);
	if (v && *v)
		return v;
	v = getenv("LANG");
	return v && *v ? v : NULL;
}

static bool names_utf8(const char *loc)
{
	const char *dot = loc ? strchr(loc, '.') : NULL;
	return dot && (!strncasecmp(dot + 1, "utf-8", 5) || !strncasecmp(dot + 1, "utf8", 4));
}

static bool is_utf8(void)
{
	const char *cs = nl_langinfo(CODESET);
	return cs && !strcmp(cs, "UTF-8");
}

/* setlocale for C.UTF-8 from the release's own copy; LOCPATH is put back as it was, so a
 * program oomfix starts ($EDITOR) sees the user's environment. */
static bool bundled_c_utf8(void)
{
	char dir[4096];
	if (!paths_share_file("oomfix/locale/C.utf8/LC_CTYPE", dir, sizeof dir) ||
	    !paths_share_file("oomfix/locale", dir, sizeof dir))
		return false;
	const char *old = getenv("LOCPATH");
	char *saved = old ? strdup(old) : NULL;
	setenv("LOCPATH", dir, 1);
	bool ok = setlocale(LC_ALL, "C.UTF-8") != NULL;
	if (saved) {
		setenv("LOCPATH", saved, 1);
		free(saved);
	} else {
		unsetenv("LOCPATH");
	}
	return ok;
}

void i18n_setlocale(void)
{
	const char *ctype = requested("LC_CTYPE");

	if (setlocale(LC_ALL, "") && (is_utf8() || !names_utf8(ctype)))
		return;
	/* A UTF-8 locale was asked for and is missing (ja_JP.UTF-8 where only C.UTF-8 exists, or no
	 * locale at all): keep UTF-8 with C.UTF-8, the system's or ours. Anything else stays as
	 * setlocale left it, and the UI draws plain ASCII. */
	if (!names_utf8(ctype))
		return;
	if (!setlocale(LC_ALL, "C.UTF-8") && !bundled_c_utf8())
		return;
	/* The language the missing locale named still selects the catalogue. */
	const char *msgs = requested("LC_MESSAGES"), *lang = getenv("LANGUAGE");
	if ((!lang || !*lang) && msgs && strcmp(msgs, "C") && strcmp(msgs, "POSIX") &&
	    strncasecmp(msgs, "C.", 2)) {
		char buf[64];
		size_t n = strcspn(msgs, ".@");
		if (n > 0 && n < sizeof buf) {
			memcpy(buf, msgs, n);
			buf[n] = '\0';
			setenv("LANGUAGE", buf, 1);
		}
	}
}

void i18n_init(void)
{
	const char *dir = OOMFIX_LOCALEDIR;
	char reloc[4096];

	/* Beside the binary first (a release, a relocated install), then the build tree (tests, the
	 * quick start), then where it was installed. */
	if (paths_share_file("locale", reloc, sizeof reloc))
		dir = reloc;
#ifdef OOMFIX_BUILD_LOCALEDIR
	else if (access(OOMFIX_BUILD_LOCALEDIR "/ja/LC_MESSAGES/oomfix.mo", F_OK) == 0)
		dir = OOMFIX_BUILD_LOCALEDIR;
#endif
	bindtextdomain(GETTEXT_PACKAGE, dir);
	bind_textdomain_codeset(GETTEXT_PACKAGE, "UTF-8");
	textdomain(GETTEXT_PACKAGE);
}

/* ---- plain ASCII output without a UTF-8 locale ------------------------------------------------ */

/* The few non-ASCII signs oomfix's own sentences use, and what a terminal without UTF-8 shows. */
static const struct {
	const char *utf8, *ascii;
} signs[] = {
	{ "\xe2\x86\x92", "->" },  /* → */
	{ "\xe2\x86\x90", "<-" },  /* ← */
	{ "\xe2\x80\x94", "-" },   /* — */
	{ "\xe2\x80\x93", "-" },   /* – */
	{ "\xe2\x80\xa6", "..." }, /* … */
	{ "\xc3\x97", "x" },       /* × */
};

struct ascii_out {
	int fd;
	char carry[3]; /* the start of a sign cut by the end of the last write */
	size_t ncarry;
};

static bool write_fd(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return false;
		p += w;
		n -= (size_t)w;
	}
	return true;
}

/* True when s[0..n) could be the start of a sign (it may continue in the next write). */
static bool sign_prefix(const char *s, size_t n)
{
	for (size_t k = 0; k < sizeof signs / sizeof signs[0]; k++)
		if (n < strlen(signs[k].utf8) && !memcmp(s, signs[k].utf8, n))
			return true;
	return false;
}

static ssize_t ascii_write(void *cookie, const char *buf, size_t size)
{
	struct ascii_out *o = cookie;
	char out[4096];
	size_t used = 0, i = 0;
	/* A sign cut by the last write: finish it from this one. */
	while (o->ncarry && o->ncarry < sizeof o->carry && i < size) {
		char joined[sizeof o->carry];
		memcpy(joined, o->carry, o->ncarry);
		joined[o->ncarry] = buf[i];
		bool whole = false;
		for (size_t k = 0; k < sizeof signs / sizeof signs[0]; k++)
			whole |= strlen(signs[k].utf8) == o->ncarry + 1 &&
				 !memcmp(joined, signs[k].utf8, o->ncarry + 1);
		if (!whole && !sign_prefix(joined, o->ncarry + 1))
			break;
		o->carry[o->ncarry++] = buf[i++];
		if (whole)
			break;
	}
	if (o->ncarry && i == size && sign_prefix(o->carry, o->ncarry))
		return (ssize_t)size; /* still cut: wait for the rest */
	const char *p = o->ncarry ? o->carry : NULL;
	size_t pn = o->ncarry;
	char held[sizeof o->carry];
	if (p) {
		memcpy(held, p, pn);
		p = held;
	}
	o->ncarry = 0;
	for (size_t pass = p ? 0 : 1; pass < 2; pass++) {
		const char *s = pass ? buf + i : p;
		size_t n = pass ? size - i : pn;
		for (size_t k = 0; k < n;) {
			if (used + 4 > sizeof out) {
				if (!write_fd(o->fd, out, used))
					return -1;
				used = 0;
			}
			bool done = false;
			if ((unsigned char)s[k] >= 0x80) {
				for (size_t m = 0; m < sizeof signs / sizeof signs[0] && !done; m++) {
					size_t l = strlen(signs[m].utf8);
					if (k + l <= n && !memcmp(s + k, signs[m].utf8, l)) {
						memcpy(out + used, signs[m].ascii, strlen(signs[m].ascii));
						used += strlen(signs[m].ascii);
						k += l;
						done = true;
					}
				}
				if (!done && pass && sign_prefix(s + k, n - k) && n - k < 3) {
					memcpy(o->carry, s + k, n - k);
					o->ncarry = n - k;
					k = n;
					done = true;
				}
			}
			if (!done)
				out[used++] = s[k++];
		}
	}
	if (used && !write_fd(o->fd, out, used))
		return -1;
	return (ssize_t)size;
}

static int ascii_close(void *cookie)
{
	struct ascii_out *o = cookie;
	bool ok = !o->ncarry || write_fd(o->fd, o->carry, o->ncarry);
	o->ncarry = 0;
	return ok ? 0 : -1;
}

/* The two streams' state lives as long as the process (the streams are never closed). */
static struct ascii_out out_err = { .fd = STDERR_FILENO }, out_std = { .fd = STDOUT_FILENO };

static FILE *ascii_stream(FILE *old, struct ascii_out *o, int mode)
{
	FILE *f = fopencookie(o, "w", (cookie_io_functions_t){ .write = ascii_write,
								.close = ascii_close });
	if (!f)
		return old;
	fflush(old);
	setvbuf(f, NULL, mode, BUFSIZ);
	return f;
}

void i18n_ascii_streams(bool with_stdout)
{
	if (is_utf8())
		return;
	stderr = ascii_stream(stderr, &out_err, _IONBF);
	if (with_stdout)
		stdout = ascii_stream(stdout, &out_std, isatty(STDOUT_FILENO) ? _IOLBF : _IOFBF);
}
