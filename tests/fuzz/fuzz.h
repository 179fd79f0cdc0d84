/* fuzz.h — what the fuzz targets share: the libFuzzer entry point and a check that aborts.
 *
 * Every target defines LLVMFuzzerTestOneInput. Under libFuzzer (run-libfuzzer.sh) libFuzzer
 * supplies main(); in the regression suite replay_main.c does, running the target over a corpus.
 * A broken invariant calls abort() so both report it the same way, with the condition and place.
 */
#ifndef OOMFIX_FUZZ_H
#define OOMFIX_FUZZ_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_CHECK(cond)                                                                  \
	do {                                                                              \
		if (!(cond)) {                                                            \
			fprintf(stderr, "%s:%d: invariant failed: %s\n", __FILE__, __LINE__, \
				#cond);                                                   \
			abort();                                                          \
		}                                                                         \
	} while (0)

/* True when s[0..len) is valid UTF-8: shortest forms only, no surrogates, nothing above
 * U+10FFFF. Written apart from text.c so that it checks that code rather than repeats it. */
static inline int fuzz_utf8_valid(const unsigned char *s, size_t len)
{
	size_t i = 0;

	while (i < len) {
		unsigned char c = s[i];
		size_t n;
		unsigned long cp;

		if (c < 0x80) {
			i++;
			continue;
		}
		if ((c & 0xE0) == 0xC0) {
			n = 2; cp = c & 0x1Fu;
		} else if ((c & 0xF0) == 0xE0) {
			n = 3; cp = c & 0x0Fu;
		} else if ((c & 0xF8) == 0xF0) {
			n = 4; cp = c & 0x07u;
		} else {
			return 0;
		}
		if (len - i < n)
			return 0;
		for (size_t k = 1; k < n; k++) {
			if ((s[i + k] & 0xC0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3Fu);
		}
		if ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
		    cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return 0;
		i += n;
	}
	return 1;
}

/* The input as a file (a memfd, at offset 0) for readers that take a descriptor or a path
 * (/proc/self/fd/N); -1 when it cannot be made. The caller closes it. */
static inline int fuzz_memfd(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", 0);
	size_t off = 0;

	if (fd < 0)
		return -1;
	while (off < size) {
		ssize_t w = write(fd, data + off, size - off);

		if (w <= 0) {
			close(fd);
			return -1;
		}
		off += (size_t)w;
	}
	if (lseek(fd, 0, SEEK_SET) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif
