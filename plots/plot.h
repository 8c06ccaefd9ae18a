/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Figures and reports from "ngauge-result/1" files (doc/result-format.md).
 *
 *   ngauge plot FILE... [-o OUT.pdf|.svg|.png|.tex] [--label NAME]... [--kind KIND]
 *   ngauge report FILE... [-o OUT.html]
 *
 * Both read every FILE completely and check it before writing anything: a
 * missing or unreadable file, invalid or truncated JSON, another schema, or a
 * document without "pattern" and a non-empty "results" array stops the command
 * with one line on stderr naming the file, exit status 1.
 *
 * plot
 *   The extension of OUT picks the gnuplot terminal: .pdf pdfcairo (default),
 *   .svg svg, .png pngcairo, .tex cairolatex (writes OUT.tex and OUT.pdf, the
 *   LaTeX text with the graphics; \input{OUT} in the paper).  Without -o, OUT
 *   is the first FILE with ".json" replaced by ".pdf".
 *
 *   Files are grouped by pattern, groups in the order of their first file.
 *   Each group is one figure file: with one group the figure is OUT itself;
 *   with several, each group gets OUT-PATTERN.EXT (fig.pdf -> fig-pingpong.pdf,
 *   fig-loggp.pdf), never panels of one page, so each figure can be placed in
 *   a paper on its own.  The rma suite is drawn as one figure per test (the
 *   rows' "test"), OUT-rma-TEST.EXT (fig-rma-put-pingpong.pdf), each with
 *   the files that have rows of that test; a single figure is OUT itself.  Beside each figure F.EXT lie F.gp,
 * the gnuplot script, and its data: F.dat for one input file, F-1.dat, F-2.dat, ... (in the order of the
 * files) for several.  Data files are plain whitespace-separated columns with "#" header comments naming the
 * source file and the columns; a file with several tables separates them by two blank lines (gnuplot
 *   "index").  Numbers are copied from the JSON exactly (shortest text that
 *   reads back to the same double); JSON null is written as NaN.  The script
 *   refers to its data by name relative to its own directory and is run there,
 *   so "cd DIR && gnuplot F.gp" redoes the figure after hand edits.
 *
 *   Figures (x: message size in bytes, log2 axis; y: log10 axis with its unit;
 *   one series per file; key top left, above the data):
 *     pingpong  latency (half round trip) and bandwidth, two panels, medians
 *               with the 95% CI of the median as error bars; with more than
 *               two ranks the aggregate bandwidth is an extra series; rows
 *               with a module's "predicted_us" (spipe's model) get that
 *               prediction as a dotted line in the series' colour (one key
 *               entry "model (dotted)"), as time and as size / time
 *     1n, n1    time per round and aggregate bandwidth, two panels, CIs
 *     loggp     o_s and o_r; T(s) as points with the fitted segments drawn
 *               over them and the breakpoints as vertical dotted lines
 *     plogp     g(m), o_s(m), o_r(m) in one panel, with their CIs
 *     alltoall  time per alltoall, one series per algorithm (and per file)
 *     bw, bibw  bandwidth and message rate, two panels, CIs; with more than
 *               two ranks the aggregates are extra series
 *     rma       per test, one series per file and synchronisation mode (the
 *               papers' figures, modules side by side): time per epoch or
 *               iteration (ping-pongs, bidir, sched-2, sync), bandwidth
 *               (put-bw, get-bw, sched-1, multi-origin); sync against the
 *               number of origins (one target) and of targets (one origin),
 *               multi-origin against origins; lock: latency against size
 *               and the aggregate throughput of n origins (epochs/s)
 *     overlap   linear axes: time per iteration against the computation as
 *               measured, one series per size and computing side, with the
 *               lines of no overlap T(0) + X (dashed) and of perfect overlap
 *               max(T(0), X) (dotted) in the series' colour
 *     skew      linear axes: the origin's time against the target's
 *               computation, one series per size, the fitted line with its
 *               slope and 95% CI in the key
 *     other     the row's first statistics key against size
 *   --kind latency keeps the time panels (latency, time, T(s), plogp, the
 *   alltoall time, rma's time figures, overlap, skew), --kind bandwidth the
 *   bandwidth panels (pingpong, 1n/n1, alltoall algbw, bw/bibw bandwidth and
 *   message rate, rma's bandwidth figures and lock throughput), --kind
 *   overhead the loggp o_s/o_r panel; --kind auto
 *   (the default) draws every panel of the pattern.  A kind that selects no
 *   panel of some group is a usage error.  Legends use the --label values in
 *   the order of the files, else "MODULE PATTERN" (made unique by the rank
 *   count, then by the file name, when files would share a label).
 *
 *   gnuplot is $NGAUGE_GNUPLOT when set (and nothing else then), else the
 *   gnuplot found at build time (NG_GNUPLOT), else "gnuplot" from PATH.  When
 *   none runs, scripts and data are still written and the command fails with
 *   "gnuplot not found: install the Debian package gnuplot-nox".  gnuplot's
 *   own messages are shown only when it fails.  On success the figures' names
 *   are printed on stdout, one a line.
 *
 * report
 *   One self-contained HTML file (inline CSS, figures as inline SVG, no
 *   external references), default OUT: the first FILE with ".json" replaced
 *   by ".html".  Per file: run information, environment and timer, parameters,
 *   the per-size table (median and 95% CI of every statistics key, plain
 *   numbers), the LogGP segments / pLogP parameters with their CIs, and the
 *   figure (rma: every test's); a comparison figure per pattern when several
 *   files share one.
 *   The figures come from the plot path with the svg terminal in a temporary
 *   directory that is removed afterwards.  Without gnuplot the report is still
 *   written, without figures, and a warning says so.  The file is written to
 *   OUT.tmp and renamed.
 *
 * Both return the process exit status: 0 success, 2 usage error, 1 failure.
 * argv[0] is the command name ("plot", "report"); -h/--help prints the usage
 * on stdout and returns 0.
 */
#ifndef NG_PLOT_H
#define NG_PLOT_H

int ng_plot_main(int argc, char **argv);
int ng_report_main(int argc, char **argv);

#endif
