// Package report renders relaybench results files (package results) as a
// terminal summary, Markdown, CSV, a condensed JSON summary, a self-contained
// HTML page with inline SVG charts, PNG/SVG chart files, and a baseline vs
// candidate comparison with a significance test. It measures nothing: every
// figure it prints is read from the results files, a figure they do not hold
// is shown as "–", and figures from phases that failed verification or were
// limited by the client are marked as such. docs/report.md describes the
// formats and their columns.
package report
