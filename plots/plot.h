/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Figures and reports from "ngauge-result/1" files (doc/result-format.md).
 *
 *   ngauge plot FILE... [-o OUT.pdf|.svg|.png|.tex] [--label NAME]... [--kind KIND]
 *   ngauge report FILE... [-o OUT.html|OUT.pdf]
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
 *   is the first FILE with ".json" replaced by ".pdf".  A panel is 5 x 3.5
 *   inches (PNG: 1200 pixels wide, 240 per inch), panels side by side; the
 *   figure grows below by the rows of its key.
 *
 *   Files are grouped by pattern, groups in the order of their first file.
 *   Each group is one figure file: with one group the figure is OUT itself;
 *   with several, each group gets OUT-PATTERN.EXT (fig.pdf -> fig-pingpong.pdf,
 *   fig-loggp.pdf), never panels of one page, so each figure can be placed in
 *   a paper on its own.  The rma suite is drawn as one figure per test (the
 *   rows' "test"), OUT-rma-TEST.EXT (fig-rma-put-pingpong.pdf), each with
 *   the files that have rows of that test; a single figure is OUT itself.
 *   Beside each figure F.EXT lie F.gp, the gnuplot script, and its data: F.dat
 *   for one input file, F-1.dat, F-2.dat, ... (in the order of the files) for
 *   several.  Data files are plain whitespace-separated columns with "#"
 *   header comments naming the source file and the columns; a file with
 *   several tables separates them by two blank lines (gnuplot "index").
 *   Numbers are copied from the JSON exactly (shortest text that reads back
 *   to the same double); JSON null is written as NaN.  The script refers to
 *   its data by name relative to its own directory, so "cd DIR && gnuplot
 *   'F.gp'" (its "Redo" comment, the name quoted for a shell) redoes the
 *   figure after hand edits.  Every file is a temporary beside its name,
 *   renamed into place (base/safefile.h): a link planted at a name is
 *   replaced, never written through.  gnuplot reads the script just written
 *   (/proc/self/fd/N, not its name) in a private directory beside the
 *   figure, its loadpath "..", writes the figure there, and the figure is
 *   renamed into place.  An output name with a control character (a byte
 *   below 0x20, 0x7f) is refused: one line, exit status 2.
 *
 *   Figures (x: message size in bytes, log2 axis with tics 1, 16, 1K, 64K, 1M;
 *   y: log10 axis with its unit, from the data alone, widened to the nearest
 *   labelled tics, plain numbers (20000000, 0.5, never 2e+07); one series per
 *   file; the key below the plot, never on the data):
 *     pingpong  latency (half round trip) and bandwidth, two panels, medians
 *               with the 95% CI of the median as error bars; with more than
 *               two ranks the aggregate bandwidth is an extra series (the
 *               other "per pair"); rows with a module's "predicted_us"
 *               (spipe's model) get that prediction as a dotted line in the
 *               series' colour (one key entry "model (dotted)"), as time and
 *               as size / time
 *     1n, n1    time per round and aggregate bandwidth, two panels, CIs
 *     loggp     o_s and o_r; T(s) as points with the fitted segments drawn
 *               over them and the breakpoints as vertical dotted lines
 *     plogp     g(m), o_s(m), o_r(m) in one panel, with their CIs
 *     alltoall  time per alltoall, one series per algorithm (and per file)
 *     coll      per operation (barrier: none), time per collective and
 *               busbw, one series per algorithm (and per file)
 *     bw, bibw  bandwidth and message rate, two panels, CIs; with more than
 *               two ranks the aggregates are extra series
 *     rma       per test, one series per file and synchronisation mode (the
 *               papers' figures, modules side by side): time per epoch or
 *               iteration (ping-pongs, bidir, sched-2, sync), bandwidth
 *               (put-bw, get-bw, sched-1, multi-origin); sync against the
 *               number of origins (one target) and, in a second panel, of
 *               targets (one origin), multi-origin against origins; lock:
 *               latency against size and the aggregate throughput of n
 *               origins (epochs/s)
 *     overlap   linear axes: time per iteration against the computation as
 *               measured, one series per size and computing side, with the
 *               lines of no overlap T(0) + X (dashed) and of perfect overlap
 *               max(T(0), X) (dotted) in the series' colour
 *     skew      linear axes: the origin's time against the target's
 *               computation, one series per size, the fitted line with its
 *               slope and 95% CI in the key
 *     ebb       the histogram of the pairs' bandwidths over every bisection
 *               (bars, log bandwidth axis), the effective bisection
 *               bandwidth (mean, its 95% CI shaded) and the median marked;
 *               a bandwidth panel (--kind bandwidth)
 *     noise     the detours over time for every rank (start in ms, length
 *               in us on a log axis, the longest of each of 1024 slots of
 *               the run), and each rank's histogram of detour lengths
 *     matrix    heatmaps, no size axis: latency of the smallest size and
 *               bandwidth of the largest, sending rank (rows, 0 at the top)
 *               against receiving rank, the diagonal grey, outliers marked
 *               with their ratio to the median
 *     other     the row's first statistics key against size
 *   --kind latency keeps the time panels (latency, time, T(s), plogp, the
 *   alltoall time, coll's time, rma's time figures, overlap, skew, the matrix's latency
 *   heatmap), --kind bandwidth the
 *   bandwidth panels (pingpong, 1n/n1, alltoall algbw, coll busbw, bw/bibw bandwidth and
 *   message rate, rma's bandwidth figures and lock throughput, the
 *   matrix's bandwidth heatmap), --kind
 *   overhead the loggp o_s/o_r panel; --kind auto
 *   (the default) draws every panel of the pattern.  A kind that selects no
 *   panel of some group is a usage error.
 *   --kind load draws the latency-throughput curve of open-loop runs at
 *   several offered loads (plots/fig_load.c): a curve per size across the
 *   files, latency against the achieved rate, its knee marked; a file
 *   without open-loop rows is not drawn ("no offered load in its rows").
 *   --kind cdf and --kind hist draw, for any pattern, the distribution of
 *   the rows' first sampled statistics key in place of the pattern's figure
 *   (plots/fig_dist.c): per row a curve (named by its size and its words,
 *   alltoall's algorithm, rma's test), the cumulative fraction (cdf) or
 *   the fraction per bin of 8 per octave (hist) against the value on a log
 *   axis, with the run's --percentiles (its "parameters") marked and named;
 *   one panel per file, side by side.  Drawn from the rows' "raw" samples,
 *   else from their "histogram" buckets (read at their midpoints); a file
 *   with neither is not drawn: "plot: FILE: not drawn: no samples to draw
 *   its distribution from: rerun with --raw (every sample) or --histogram
 *   (the buckets)", exit status 1.  The data file holds per row four
 *   tables: the cdf, its percentiles, the hist, its percentiles.
 *
 *   Legends and title: a file's series are named by its --label (in the
 *   order of the files), else by what tells the files of the figure apart:
 *   module, rma design and scheduling, spipe's or the verbs modules' mode,
 *   RDMA backend, libfabric provider, rank count, then other parameters,
 *   the host, the file name (plots/legend.h); what they all share is said
 *   once, in the title ("tcp pingpong", "put-bw: rma, design direct").  A
 *   run whose busy-polling ranks outnumbered the cores is marked
 *   "(oversubscribed)" in the legend, one with validity warnings (the
 *   result's "warnings") by their number, "(2 warnings)".
 *
 *   What cannot be drawn: size 0, which a log axis has not, is drawn at its
 *   own place left of the smallest size (the tic "0", set off by a dotted
 *   line; lines join only the other sizes).  A value of 0 or below on a log
 *   axis (the bandwidth of size 0), and a point without its x (an rma row
 *   without origins), are left out; a panel, or a figure of a part, with
 *   nothing to draw is left out; each figure that leaves something out says
 *   so in one warning line, "plot: FILE[, test PART]: left out: ...".  A file
 *   of which nothing can be drawn (no value, no block its figure needs such
 *   as "loggp", no row naming rma's test) is refused before any figure is
 *   drawn: "plot: FILE: not drawn: WHY", exit status 1, nothing written.
 *
 *   gnuplot is $NGAUGE_GNUPLOT when set (and nothing else then), else the
 *   gnuplot found at build time (NG_GNUPLOT), else "gnuplot" from PATH.  When
 *   none runs, scripts and data are still written and the command fails with
 *   "gnuplot not found: install the Debian package gnuplot-nox".  Should
 *   gnuplot fail, one line names the script and gnuplot's complaint.  On
 *   success the figures' names are printed on stdout, one a line.
 *
 * report
 *   One self-contained HTML file (inline CSS, figures as inline SVG, no
 *   external references, no scripts), default OUT: the first FILE with
 *   ".json" replaced by ".html".  Per file: run information, environment and
 *   timer, the parameters that apply to the run (those of its module and
 *   pattern, without the ones its launch or configuration leaves unused, such
 *   as --server's for a local run or --rma-sched with the sendrecv design;
 *   their names in a note), the run's validity warnings, the per-size
 *   table (median and 95% CI of every statistics key, plain numbers), the
 *   pattern's blocks (LogGP segments,
 *   pLogP parameters with their CIs, ...), any other data as tables, and the
 *   figure (rma: every test's) and, for a file with "raw" samples or
 *   "histogram" buckets, its distribution (as plot --kind cdf); a comparison figure per pattern when several
 *   files share one, with the ratios of the others to the first of them
 *   (compare.h: the table, the runs' differences and the ratios' figure).
 *   Tables fit an A4 or letter page: cells wrap, and a table whose numbers
 *   cannot fit is split into several, each with the columns that name the
 *   rows.  Figures are as wide as the page.
 *   The figures come from the plot path with the svg terminal in a temporary
 *   directory that is removed afterwards.  Without gnuplot the report is still
 *   written, without figures, and a warning says so.  What a figure leaves
 *   out is said in the page; a file of which no figure can be drawn is said
 *   in the page and in one line, "report: FILE: not drawn: WHY", and the page
 *   is written with the others (exit status 1).  The file is written to a
 *   temporary beside OUT and renamed (base/safefile.h).  OUT.pdf: the page printed by headless Chromium
 *   ($NGAUGE_CHROMIUM when set, else chromium, chromium-browser or
 *   google-chrome from PATH; Debian package chromium); without it one line
 *   says so, exit status 1, nothing written.
 *
 * Both return the process exit status: 0 success, 2 usage error, 1 failure
 * (the same for the same file in both); their own messages start with
 * "plot:" or "report:".  argv[0] is the command name ("plot", "report");
 * -h/--help prints the usage on stdout and returns 0.
 */
#ifndef NG_PLOT_H
#define NG_PLOT_H

int ng_plot_main(int argc, char **argv);
int ng_report_main(int argc, char **argv);
/* ngauge compare A.json B.json ... (plots/compare.c; doc/compare.md): exit
 * status 0 (no row slower), 3 (some row slower), 2 (usage, files that
 * cannot be compared), 1 (an output could not be written). */
int ng_compare_main(int argc, char **argv);
/* ngauge ab [--rounds N] [--keep DIR] [compare's options] -- ARGS_A -- ARGS_B
 * (ab.c, doc/compare.md): the two command lines run alternately, then
 * compared; compare's exit status, 1 when a run failed, 2 usage. */
int ng_ab_main(int argc, char **argv);

#endif
