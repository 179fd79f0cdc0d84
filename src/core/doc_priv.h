/* doc_priv.h — what doc.c and doc_edit.c share and nobody else needs. */
#ifndef OOMFIX_DOC_PRIV_H
#define OOMFIX_DOC_PRIV_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/buf.h"
#include "oomfix/doc.h"

/* Every node is allocated as a dnode; the public part comes first so the pointers convert. */
struct dnode {
	struct doc_node pub;
	size_t vstart;   /* byte where the content starts (after an anchor and a tag) */
	bool flow_ctx;   /* the node sits inside a flow collection */
};

struct doc_chunk;

struct doc {
	char *name;
	char *text; /* the original bytes plus a NUL that is not part of the document */
	size_t len;
	struct doc_node *root;
	struct doc_chunk *chunks;
	size_t nnodes;
	size_t bom;  /* 3 when the text starts with a UTF-8 byte order mark */
	bool crlf;   /* the first line break is CRLF: new lines use it too */
};

/* The resolved type of a scalar, as the trainer's loader sees it. */
enum doc_stype { DOC_T_NULL, DOC_T_BOOL, DOC_T_INT, DOC_T_FLOAT, DOC_T_STR };

enum doc_stype doc_scalar_type(const struct doc_node *n);

/* One component of a path: a key or an [index]. */
struct doc_pcomp {
	bool is_index;
	size_t index;
	char *key;
	size_t klen;
	size_t end; /* bytes of the path up to the end of this component */
};

/* Splits a path; on success *out is a malloc'd array (free with doc_path_free). */
int doc_path_parse(const char *path, struct doc_pcomp **out, size_t *n, struct err *e);
void doc_path_free(struct doc_pcomp *c, size_t n);

/* Finds a key in the map's own pairs only (no merge keys): the last occurrence wins, as in the
 * trainer's loader. Returns the pair index or (size_t)-1. */
size_t doc_own_index(const struct doc_node *map, const char *key, size_t klen);

/* Map lookup following merge keys, with the key given as bytes. */
const struct doc_node *doc_map_getn(const struct doc_node *map, const char *key, size_t klen);

/* True when the scalar can be written plain inside a flow collection and reads back as the same
 * string (no quoting needed). */
bool doc_plain_ok(const char *s, size_t len, bool flow);

/* Appends `s` in double quotes, with YAML escapes, to b. */
void doc_buf_dquote(struct strbuf *b, const char *s, size_t n);


/* 1-based line and column (in characters) of a byte offset, for messages. */
void doc_linecol(const struct doc *d, size_t off, int *line, int *col);

#endif
