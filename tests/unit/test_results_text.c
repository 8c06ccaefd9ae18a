/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The result's arrays kept as text (core/results.h, ng_results_text):
 *   - three arrays put in a row, a block and the document's head (one of
 *     elements with commas, quotes, brackets and a placeholder-like string in
 *     them, one of many elements, one empty) come out of the file as the
 *     arrays of the elements added, in their places, the document valid JSON;
 *   - strings beside them that look like the writer's pieces are written as
 *     they are: an empty string, a quote, a placeholder of no array, one
 *     followed by more text;
 *   - the file is the same at every checkpoint (row commit, finish); reals
 *     keep 10 significant digits, as in the rest of the file;
 *   - with no result sink (a rank other than 0) the value is null and the
 *     text freed.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results_priv.h"
#include "tests/check.h"

static json_t *load(const char *path)
{
	json_error_t err;
	json_t *doc = json_load_file(path, 0, &err);

	CHECK(doc != NULL, "the file is no JSON: %s (line %d)", err.text, err.line);
	return doc;
}

int main(void)
{
	char dir[] = "/tmp/ngauge-results-text.XXXXXX", path[128];
	struct ng_results_text odd = {0}, many = {0}, none = {0}, lost = {0};
	struct ng_results *res;
	struct ng_row *row;
	json_t *doc, *want_odd = json_array(), *got;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(path, sizeof(path), "%s/r.json", dir);
	doc = json_pack("{s:s,s:s,s:s,s:s,s:s,s:n}", "empty", "", "quote", "\"", "unknown",
	                "@ngauge-text-array-9@", "longer", "@ngauge-text-array-0@ and more", "schema",
	                "ngauge-result/1", "placement");
	res = ng_results_new(doc, path, false, "test");

	/* elements with the writer's own characters in their strings */
	for (int i = 0; i < 3; i++) {
		json_t *e = json_pack("{s:i,s:s,s:[i,s]}", "rank", i, "text",
		                      i == 1 ? "a, \"b\" ]\n[" : "@ngauge-text-array-1@", "list", i, "x,y");

		json_array_append(want_odd, e);
		CHECK(ng_results_text_add(&odd, e) == NG_OK, "element %d added", i);
	}
	CHECK(odd.n == 3 && odd.buf && strlen(odd.buf) == odd.len, "3 elements, %zu bytes", odd.len);
	for (int i = 0; i < 1000; i++)
		CHECK(ng_results_text_add(&many, json_pack("{s:i,s:f}", "client", i, "median", i / 3.0)) ==
		          NG_OK,
		      "element %d added", i);
	json_object_set_new(doc, "placement", ng_results_text_value(res, &odd));
	CHECK(odd.buf == NULL && odd.n == 0 && odd.len == 0, "the text moved into the results");

	row = ng_row_begin(res, 8, 10);
	ng_row_json(row, "pairs", ng_results_text_value(res, &many));
	CHECK(ng_row_commit(res, row) == NG_OK, "the row committed");
	got = load(path);
	if (got) {
		json_t *pairs = json_object_get(json_array_get(json_object_get(got, "results"), 0), "pairs");

		CHECK(json_equal(json_object_get(got, "placement"), want_odd),
		      "the placement at the first checkpoint");
		CHECK(json_array_size(pairs) == 1000, "1000 pairs at the first checkpoint, %zu",
		      json_array_size(pairs));
		json_decref(got);
	}
	CHECK(ng_results_block(res, "none", ng_results_text_value(res, &none)) == NG_OK, "the block set");
	CHECK(ng_results_finish(res, true) == NG_OK, "the file written");
	got = load(path);
	if (got) {
		json_t *pairs = json_object_get(json_array_get(json_object_get(got, "results"), 0), "pairs");
		size_t i;
		json_t *e;
		int bad = 0;

		CHECK(json_equal(json_object_get(got, "placement"), want_odd), "the placement in its place");
		json_array_foreach(pairs, i, e) bad +=
		    json_integer_value(json_object_get(e, "client")) != (json_int_t)i ||
		    fabs(json_number_value(json_object_get(e, "median")) - (double)i / 3.0) >
		        1e-9 * (double)i;
		CHECK(json_array_size(pairs) == 1000 && bad == 0, "1000 pairs in order, %d wrong", bad);
		CHECK(json_is_array(json_object_get(got, "none")) &&
		          json_array_size(json_object_get(got, "none")) == 0,
		      "the empty array");
		CHECK(!strcmp(json_string_value(json_object_get(got, "empty")), ""), "the empty string");
		CHECK(!strcmp(json_string_value(json_object_get(got, "quote")), "\""), "the quote");
		CHECK(!strcmp(json_string_value(json_object_get(got, "unknown")), "@ngauge-text-array-9@"),
		      "a placeholder of no array, as it is");
		CHECK(!strcmp(json_string_value(json_object_get(got, "longer")),
		              "@ngauge-text-array-0@ and more"),
		      "a placeholder followed by more text, as it is");
		CHECK(!strcmp(json_string_value(json_object_get(got, "schema")), "ngauge-result/1"),
		      "the schema");
		json_decref(got);
	}
	ng_results_free(res);

	CHECK(ng_results_text_add(&lost, json_integer(1)) == NG_OK, "element added");
	got = ng_results_text_value(NULL, &lost);
	CHECK(json_is_null(got) && lost.buf == NULL && lost.n == 0, "no sink: null, the text freed");
	json_decref(got);
	json_decref(want_odd);
	unlink(path);
	rmdir(dir);
	return check_exit();
}
