/* doc.h — a YAML document that keeps every byte of the original text.
 *
 * The document is the original bytes plus a node tree whose nodes record their byte spans
 * (converted from libyaml's character marks). An edit never rewrites the tree: it splices the
 * original text, re-parses the result and checks that the edited path holds exactly the intended
 * value and that every other path holds what it held before. A document is immutable once loaded;
 * an edit returns a new document, so undo is keeping the old one.
 *
 * Paths are dotted keys with [i] indices: "config.process[0].datasets[1].resolution".
 * A key that contains '.', '[' or ']' can be written in double quotes: a."b.c".d
 * Lookups follow aliases and merge keys (<<), as the trainer's YAML loader does.
 */
#ifndef OOMFIX_DOC_H
#define OOMFIX_DOC_H

#include <stdbool.h>
#include <stddef.h>

#include "oomfix/err.h"

/* Limits that keep hostile input harmless (documented in the man page). */
#define DOC_MAX_BYTES (64u * 1024 * 1024) /* larger files are refused */
#define DOC_MAX_DEPTH 256                 /* deeper nesting is refused */
#define DOC_MAX_NODES 4000000             /* more nodes are refused */

enum doc_kind { DOC_SCALAR, DOC_MAP, DOC_SEQ, DOC_ALIAS };
enum doc_style { DOC_PLAIN, DOC_SQUOTED, DOC_DQUOTED, DOC_LITERAL, DOC_FOLDED, DOC_BLOCK, DOC_FLOW };

/* A place in the original text: [start, end) in bytes, line and column 1-based of start. */
struct doc_span {
	size_t start, end;
	int line, col;
};

struct doc_node {
	enum doc_kind kind;
	enum doc_style style;    /* scalars: quoting; collections: DOC_BLOCK or DOC_FLOW */
	struct doc_span span;    /* the node's own text (scalar incl. quotes; collection whole) */
	const char *value;       /* scalars: decoded value, NUL-terminated (owned by the doc) */
	size_t value_len;
	const char *tag;         /* explicit tag or NULL */
	const char *anchor;      /* &anchor or NULL */
	struct doc_node *target; /* DOC_ALIAS: the anchored node */
	struct doc_node *parent;
	size_t n;                /* number of children (map pairs or seq items) */
	struct doc_node **keys;  /* DOC_MAP: keys[i] (scalars); NULL for DOC_SEQ */
	struct doc_node **items; /* DOC_MAP: values; DOC_SEQ: items */
};

struct doc;

/* Loads a document from `len` bytes (copied). `name` is used in error messages.
 * Returns ERR_OK and sets *out, or an error (ERR_DATA for invalid YAML, with line/col). */
int doc_load(const char *name, const char *text, size_t len, struct doc **out, struct err *e);

/* Reads and loads a file (ERR_NOINPUT when it cannot be opened, or is a directory). */
int doc_load_file(const char *path, struct doc **out, struct err *e);

/* Frees the document and sets *d to NULL. Safe on NULL. */
void doc_free(struct doc **d);

/* The original text (exactly the bytes loaded) and its length; owned by the doc. */
const char *doc_text(const struct doc *d, size_t *len);
const char *doc_name(const struct doc *d);

/* Root node of the first document in the stream (NULL for an empty file). */
const struct doc_node *doc_root(const struct doc *d);

/* Looks a path up, following aliases and merge keys. NULL when absent. */
const struct doc_node *doc_get(const struct doc *d, const char *path);

/* Child of a mapping by key (aliases and merge keys followed); NULL when absent. */
const struct doc_node *doc_map_get(const struct doc_node *map, const char *key);

/* Follows an alias to its target (identity for other nodes). */
const struct doc_node *doc_deref(const struct doc_node *n);

/* Scalar helpers: read a scalar as the trainer would (YAML 1.1 booleans yes/no/on/off/true/false,
 * numbers including `1e-4`). Return false when the node is absent or not of that type. */
bool doc_as_bool(const struct doc_node *n, bool *out);
bool doc_as_long(const struct doc_node *n, long long *out);
bool doc_as_double(const struct doc_node *n, double *out);
bool doc_is_null(const struct doc_node *n);

/* Writes the node as the trainer reads it: a scalar unquoted, a collection as flow YAML
 * (e.g. "[512, 768]", "{a: 1}"). Returns a malloc'd string the caller frees. */
char *doc_to_flow(const struct doc_node *n);

/* doc_to_flow with a bound on the nodes visited (aliases can make a small file expand to a huge
 * value): when the bound is reached the text ends in " ..." and *truncated (if not NULL) is set.
 * Returns a malloc'd string the caller frees, NULL when out of memory. */
char *doc_to_flow_bounded(const struct doc_node *n, size_t max_nodes, bool *truncated);

/* For an absent path: the deepest node that the path reaches (the root at least) and, in
 * *prefix_len, how many bytes of `path` lead to it (0 for the root). NULL for a bad path. */
const struct doc_node *doc_get_nearest(const struct doc *d, const char *path, size_t *prefix_len);

/* One edit. `value` is YAML text ("true", "7", "[512, 768]", "\"text\""). */
enum doc_edit_op {
	DOC_EDIT_SET,         /* replace the value at path, or insert the key if the parent map lacks it */
	DOC_EDIT_REMOVE_KEY,  /* remove the key at path (absent: no change) */
	DOC_EDIT_REMOVE_ITEM, /* remove item `index` of the sequence at path */
	DOC_EDIT_APPEND_ITEM, /* add `value` as the last item of the sequence at path */
	DOC_EDIT_SET_MARKED,  /* SET made by a fix: a comment after the old value on its line is kept
				 as "# oomfix: was OLD; comment", so it does not lie about the new one */
	DOC_EDIT_REMOVE_ITEM_MARKED, /* REMOVE_ITEM made by a fix: on a one-line flow list, the
				 comment after it becomes "# oomfix: was [OLD]; comment" */
};
struct doc_edit {
	enum doc_edit_op op;
	const char *path;
	const char *value;
	size_t index;
};

/* Applies edits in order to a copy of the text and returns the new document in *out. Every edit
 * is verified (re-parse; the path holds exactly the intended value; every other path unchanged);
 * on any failure *out is NULL, an error is returned and `d` is untouched. An edit that sets a value
 * to what it already is changes no byte. */
int doc_apply(const struct doc *d, const struct doc_edit *edits, size_t n, struct doc **out,
	      struct err *e);

/* What differs between two documents, as "path: old → new" lines (the deepest paths that differ;
 * "(absent)" for a key on one side only; a list whose length changed as a whole). Returns the
 * number of lines; *out is malloc'd, free it with doc_changes_free. Bounded to 1000 lines. */
size_t doc_changes(const struct doc *a, const struct doc *b, char ***out);
void doc_changes_free(char **v, size_t n);

/* Parses "PATH=VALUE" for the CLI; on success *path and *value point into a malloc'd copy the
 * caller frees with free(*path). */
int doc_parse_assignment(const char *arg, char **path, char **value, struct err *e);

/* Compares two nodes by value (scalars by decoded value and style-insensitive type, collections
 * recursively, aliases followed). Used by verification and by tests. The work is bounded (about
 * 4 million node visits, so an alias bomb cannot hang it); past that it answers false, which makes
 * an edit refuse rather than accept something it could not check. */
bool doc_node_equal(const struct doc_node *a, const struct doc_node *b);

#endif
