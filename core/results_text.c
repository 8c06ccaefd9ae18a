/* SPDX-License-Identifier: BSD-3-Clause */
/* The result's arrays kept as compact text (results.h), and the writer that
 * puts them in their places in the file (results_text.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "results_text.h"

ng_status ng_results_text_add(struct ng_results_text *t, json_t *v)
{
	char *text =
	    v ? json_dumps(v, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10) | JSON_ENCODE_ANY)
	      : NULL;
	size_t tl = text ? strlen(text) : 0, need = t->len + tl + 3;

	json_decref(v);
	if (!text)
		goto err_nomem;
	if (need > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		char *b;

		while (cap < need)
			cap *= 2;
		b = realloc(t->buf, cap);
		if (!b)
			goto err_free_text;
		t->buf = b;
		t->cap = cap;
	}
	if (t->n) {
		t->buf[t->len++] = ',';
		t->buf[t->len++] = '\n';
	}
	memcpy(t->buf + t->len, text, tl + 1);
	t->len += tl;
	t->n++;
	free(text);
	return NG_OK;

err_free_text:
	free(text);
err_nomem:
	ng_error("out of memory building the result");
	return NG_ERR_NOMEM;
}

void ng_results_text_free(struct ng_results_text *t)
{
	free(t->buf);
	memset(t, 0, sizeof(*t));
}

/* Where json_dump_callback's output goes: the file, with each text array's
 * placeholder replaced by the array.  jansson writes a string as three
 * pieces (its opening quote, its text when nothing in it needs escaping,
 * its closing quote): an opening quote is held back until the next piece
 * shows whether it opens a placeholder. */
struct text_dump {
	const struct ng_results_text *text;
	size_t ntext;
	FILE *f;
	bool quote_held, skip_quote;
};

/* The text array @s[0..len) is the placeholder of, or NULL. */
static const struct ng_results_text *text_of(const struct text_dump *d, const char *s, size_t len)
{
	char piece[64], mark[64];
	size_t i;

	if (len < 2 || s[0] != '@' || len >= sizeof(piece))
		return NULL;
	memcpy(piece, s, len); /* a piece of the output, not a C string */
	piece[len] = '\0';
	if (sscanf(piece, NG_RESULTS_TEXT_MARK, &i) != 1 || i >= d->ntext)
		return NULL;
	snprintf(mark, sizeof(mark), NG_RESULTS_TEXT_MARK, i);
	return strcmp(mark, piece) == 0 ? &d->text[i] : NULL;
}

static int text_dump_piece(const char *buf, size_t len, void *data)
{
	struct text_dump *d = data;
	const struct ng_results_text *t;

	if (d->skip_quote) {
		d->skip_quote = false;
		if (len == 1 && buf[0] == '"')
			return 0;
	}
	if (d->quote_held) {
		d->quote_held = false;
		if ((t = text_of(d, buf, len))) {
			d->skip_quote = true;
			if (!t->n)
				return fputs("[]", d->f) == EOF ? -1 : 0;
			/* as kept: one element a line */
			return fputs("[\n", d->f) == EOF || fwrite(t->buf, 1, t->len, d->f) != t->len ||
			               fputs("\n]", d->f) == EOF
			           ? -1
			           : 0;
		}
		if (fputc('"', d->f) == EOF)
			return -1;
	}
	if (len == 1 && buf[0] == '"') {
		d->quote_held = true;
		return 0;
	}
	return fwrite(buf, 1, len, d->f) == len ? 0 : -1;
}

int ng_results_text_dump(const json_t *doc, const struct ng_results_text *text, size_t ntext, FILE *f)
{
	struct text_dump d = {.text = text, .ntext = ntext, .f = f};

	if (json_dump_callback(doc, text_dump_piece, &d,
	                       JSON_INDENT(1) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(10)))
		return -1;
	return d.quote_held && fputc('"', f) == EOF ? -1 : 0;
}
