//===- RenderText.cpp - a schedule as a fixed-width grid ------------------===//
//
// One row per worker, one column per time quantum: the gcd of every job's
// start and end (exact), or, past `maxColumns`, makespan / maxColumns
// rounded up (jobs then snap to columns). A job fills its columns with its
// label and dashes; an idle column shows a dot.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Diagram.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"

#include <numeric>

using namespace pipesched::diagram;

/// Light ANSI 256-colour backgrounds, one per microbatch (cycled).
static constexpr int kPalette[] = {153, 217, 187, 223, 159, 225,
                                   194, 230, 189, 181, 152, 222};

static int64_t ceilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

static std::string kindsLegend(const Diagram &d) {
  static constexpr std::pair<char, const char *> kNames[] = {
      {'F', "forward"},
      {'B', "backward"},
      {'I', "input-gradient half"},
      {'W', "weight-gradient half"},
      {'G', "loss gradient"},
      {'J', "Jacobian"},
      {'C', "scan product"}};
  std::string legend;
  for (auto [kind, name] : kNames)
    if (llvm::any_of(d.jobs, [k = kind](const Job &j) { return j.kind == k; }))
      legend += (legend.empty() ? "" : ", ") + std::string(1, kind) + " " + name;
  return legend;
}

/// The time ruler: a time every five columns, where it fits.
static void printRuler(llvm::raw_ostream &os, int64_t columns, int64_t quantum,
                       size_t margin, size_t cell) {
  std::string ruler(margin + size_t(columns) * cell, ' ');
  size_t free = 0;
  for (int64_t c = 0; c <= columns; c += 5) {
    std::string t = std::to_string(c * quantum);
    size_t at = margin + size_t(c) * cell;
    if (at < free)
      continue;
    if (ruler.size() < at + t.size())
      ruler.resize(at + t.size(), ' ');
    ruler.replace(at, t.size(), t);
    free = at + t.size() + 1;
  }
  while (!ruler.empty() && ruler.back() == ' ')
    ruler.pop_back();
  os << ruler << "\n";

}

/// The job shown in each column of a worker's row: the one that covers most
/// of it (all of it when the grid is exact).
static std::vector<const Job *> shownJobs(std::vector<const Job *> &jobs,
                                          int64_t columns, int64_t quantum) {
  llvm::stable_sort(jobs, [](const Job *a, const Job *b) {
    return a->start < b->start;
  });
  std::vector<const Job *> shown(size_t(columns), nullptr);
  size_t next = 0;
  for (int64_t c = 0; c < columns; ++c) {
    int64_t lo = c * quantum, hi = lo + quantum, best = 0;
    while (next < jobs.size() && jobs[next]->end <= lo)
      ++next;
    for (size_t k = next; k < jobs.size() && jobs[k]->start < hi; ++k) {
      int64_t overlap =
          std::min(hi, jobs[k]->end) - std::max(lo, jobs[k]->start);
      if (overlap > best) {
        best = overlap;
        shown[size_t(c)] = jobs[k];
      }
    }
  }
  return shown;
}

/// A worker's row of text: each job's label in its first column, dashes
/// after, '.' where idle; and each character's colour (-1: none).
static std::string rowText(const std::vector<const Job *> &shown,
                           int64_t columns, size_t cell,
                           std::vector<int> &color) {
  std::string row(size_t(columns) * cell, ' ');
  color.assign(row.size(), -1);
  for (int64_t c = 0; c < columns;) {
    const Job *j = shown[size_t(c)];
    int64_t span = 1;
    while (c + span < columns && j && shown[size_t(c + span)] == j)
      ++span;
    size_t from = size_t(c) * cell, length = size_t(span) * cell - 1;
    if (!j) {
      row[from] = '.';
    } else {
      std::string text = j->label.substr(0, length);
      text.resize(length, '-');
      row.replace(from, length, text);
      int shade = kPalette[size_t(j->microbatch) % std::size(kPalette)];
      std::fill(color.begin() + from, color.begin() + from + length, shade);
    }
    c += span;
  }
  return row;
}

/// A worker's row, coloured by microbatch if asked; without trailing spaces
/// (they would make goldens fragile).
static void printRow(llvm::raw_ostream &os, int32_t w, size_t margin,
                     const std::string &row, const std::vector<int> &color,
                     bool colored) {
  std::string name = "w" + std::to_string(w);
  os << name << std::string(margin - name.size(), ' ');
  size_t end = row.find_last_not_of(' ');
  end = end == std::string::npos ? 0 : end + 1;
  int current = -1;
  for (size_t i = 0; i < end; ++i) {
    int want = colored ? color[i] : -1;
    if (want != current) {
      if (current >= 0)
        os << "\x1b[0m";
      if (want >= 0)
        os << "\x1b[48;5;" << want << "m\x1b[30m";
      current = want;
    }
    os << row[i];
  }
  if (current >= 0)
    os << "\x1b[0m";
  os << "\n";
}

void pipesched::diagram::renderText(const Diagram &d, llvm::raw_ostream &os,
                                    const TextOptions &options) {
  // The quantum: exact where the grid stays narrow enough.
  int64_t quantum = 0;
  for (const Job &j : d.jobs)
    quantum = std::gcd(quantum, std::gcd(j.start, j.end));
  if (quantum <= 0)
    quantum = 1;
  int64_t maxColumns = std::max<int64_t>(1, options.maxColumns);
  bool exact = d.makespan / quantum <= maxColumns;
  if (!exact)
    quantum = ceilDiv(d.makespan, maxColumns);
  int64_t columns = ceilDiv(d.makespan, quantum);

  size_t width = 3;
  for (const Job &j : d.jobs)
    if (!j.partOfPair)
      width = std::max(width, j.label.size());
  size_t cell = width + 1;
  std::string rowName = "w" + std::to_string(std::max(0, d.workers - 1));
  size_t margin = rowName.size() + 2;

  os << d.title << "; latency " << d.makespan << " ticks";
  if (d.tickNs)
    os << llvm::format(" = %.3f ms", double(d.makespan) * d.tickNs / 1e6);
  os << "; 1 column = " << quantum << (quantum == 1 ? " tick" : " ticks")
     << (exact ? "" : " (rounded)") << "\n";

  printRuler(os, columns, quantum, margin, cell);

  // Each worker's boxes by start: a column shows the job that covers most
  // of it (all of it when the grid is exact), its label in the job's first
  // column, dashes after.
  std::vector<std::vector<const Job *>> rows(size_t(std::max(0, d.workers)));
  for (const Job &j : d.jobs)
    if (!j.partOfPair && j.end > j.start)
      rows[size_t(j.worker)].push_back(&j);
  for (int32_t w = 0; w < d.workers; ++w) {
    std::vector<const Job *> shown = shownJobs(rows[size_t(w)], columns, quantum);
    std::vector<int> color;
    std::string row = rowText(shown, columns, cell, color);
    printRow(os, w, margin, row, color, options.color);
  }
  os << "labels: <stage><kind><microbatch>; " << kindsLegend(d)
     << "; . idle\n";
}
