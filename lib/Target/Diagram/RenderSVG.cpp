//===- RenderSVG.cpp - a schedule as an SVG picture -----------------------===//
//
// Workers as rows on a light lane (idle time stays empty), time to the
// right on a fixed plot width, a box per job coloured by microbatch (hue)
// and direction (lightness), transfers and weight fetches as thin lines
// between rows, a time axis and a legend. Every job box is a
// `<rect class="job">` with a `<title>` tooltip; zero-length jobs are
// `<line class="instant">`.
//
//===----------------------------------------------------------------------===//

#include "pipesched/Target/Diagram.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstdio>

using namespace pipesched::diagram;

namespace {
constexpr double kLeft = 56, kTop = 40, kRow = 30, kBox = 22, kPlot = 960;
constexpr double kCharWidth = 6.2; // 10px monospace

/// A job's fill: hue by microbatch, lightness by kind.
std::string fillOf(const Job &j) {
  double hue = std::fmod(double(j.microbatch) * 137.508, 360.0);
  int light = j.kind == 'F' ? 78 : j.kind == 'W' ? 42 : j.kind == 'B' || j.kind == 'I' ? 58 : 68;
  return llvm::formatv("hsl({0:F1},62%,{1}%)", hue, light).str();
}

const char *kindName(char kind) {
  switch (kind) {
  case 'F':
    return "forward";
  case 'B':
    return "backward";
  case 'I':
    return "input-gradient half";
  case 'W':
    return "weight-gradient half";
  case 'G':
    return "loss gradient";
  case 'J':
    return "Jacobian";
  default:
    return "scan product";
  }
}

/// A round step for about `target` ticks on an axis of `span`.
int64_t niceStep(int64_t span, int target) {
  double raw = std::max(1.0, double(span) / target);
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * power >= raw)
      return std::max<int64_t>(1, int64_t(m * power));
  return int64_t(10 * power);
}

class Painter {
public:
  Painter(const Diagram &d, llvm::raw_ostream &os)
      : d(d), os(os), scale(d.makespan > 0 ? kPlot / double(d.makespan) : 0) {}

  void paint(bool standalone) {
    double height = kTop + d.workers * kRow + 90;
    double width = kLeft + kPlot + 24;
    os << "<svg";
    if (standalone)
      os << " xmlns=\"http://www.w3.org/2000/svg\"";
    os << llvm::format(" class=\"pipesched-schedule\" width=\"%.0f\" "
                       "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                       "font-family=\"monospace\" font-size=\"10\">\n",
                       width, height, width, height);
    os << "<style>.job{stroke:#333;stroke-width:0.5}"
          ".transfer{stroke:#444;stroke-width:0.7;opacity:0.45}"
          ".fetch{stroke:#c05000;stroke-width:0.9;stroke-dasharray:3 2;opacity:0.8}"
          ".instant{stroke:#000;stroke-width:1.5}"
          ".lane{fill:#f3f3f3}</style>\n";
    os << "<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n";
    os << llvm::format("<text x=\"%.0f\" y=\"18\" font-size=\"12\">", kLeft)
       << escaped(d.title) << "; latency " << timeText(d.makespan)
       << "</text>\n";
    lanes();
    jobs();
    marks();
    axis();
    legend();
    os << "</svg>\n";
  }

private:
  double x(int64_t t) const { return kLeft + double(t) * scale; }
  double rowTop(int32_t w) const { return kTop + w * kRow; }

  std::string timeText(int64_t ticks) const {
    if (d.tickNs)
      return milliseconds(ticks) + " ms";
    return std::to_string(ticks) + " ticks";
  }

  std::string milliseconds(int64_t ticks) const {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.4g", double(ticks) * d.tickNs / 1e6);
    return buf;
  }

  static std::string escaped(llvm::StringRef s) {
    std::string out;
    llvm::raw_string_ostream os(out);
    llvm::printHTMLEscaped(s, os);
    return out;
  }

  void lanes() {
    for (int32_t w = 0; w < d.workers; ++w) {
      os << llvm::format("<rect class=\"lane\" x=\"%.2f\" y=\"%.2f\" "
                         "width=\"%.2f\" height=\"%.2f\"/>",
                         kLeft, rowTop(w), kPlot, kBox)
         << llvm::format("<text x=\"6\" y=\"%.2f\">worker %d</text>\n",
                         rowTop(w) + kBox / 2 + 3.5, w);
    }
  }

  void jobs() {
    for (const Job &j : d.jobs) {
      if (j.partOfPair)
        continue;
      double top = rowTop(j.worker);
      std::string tip = llvm::formatv(
          "{0}: stage {1}, microbatch {2}, {3}, {4} to {5}", j.label, j.stage,
          j.microbatch, kindName(j.kind), j.start, j.end);
      if (j.end == j.start) {
        os << llvm::format("<line class=\"instant\" x1=\"%.2f\" y1=\"%.2f\" "
                           "x2=\"%.2f\" y2=\"%.2f\"><title>",
                           x(j.start), top, x(j.start), top + kBox)
           << escaped(tip) << "</title></line>\n";
        continue;
      }
      double width = x(j.end) - x(j.start);
      os << llvm::format("<rect class=\"job\" x=\"%.2f\" y=\"%.2f\" "
                         "width=\"%.2f\" height=\"%.2f\" ",
                         x(j.start), top, width, kBox)
         << "fill=\"" << fillOf(j) << "\" data-worker=\"" << j.worker
         << "\" data-stage=\"" << j.stage << "\" data-microbatch=\""
         << j.microbatch << "\" data-kind=\"" << j.kind << "\"><title>"
         << escaped(tip) << "</title></rect>";
      if (width >= j.label.size() * kCharWidth + 3)
        os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" "
                           "fill=\"%s\">",
                           x(j.start) + width / 2, top + kBox / 2 + 3.5,
                           j.kind == 'W' ? "#ffffff" : "#000000")
           << escaped(j.label) << "</text>";
      os << "\n";
    }
  }

  void marks() {
    for (const Mark &m : d.marks) {
      bool weights = m.kind == Mark::Kind::Weights;
      // From the bottom of the sender's lane to the top of the receiver's
      // (or the reverse when the receiver is above).
      bool down = m.to > m.from;
      double y1 = rowTop(m.from) + (down ? kBox : 0);
      double y2 = rowTop(m.to) + (down ? 0 : kBox);
      os << llvm::format("<line class=\"%s\" x1=\"%.2f\" y1=\"%.2f\" "
                         "x2=\"%.2f\" y2=\"%.2f\"><title>",
                         weights ? "fetch" : "transfer", x(m.sent), y1,
                         x(m.arrived), y2)
         << (weights                        ? "weights of stage "
             : m.kind == Mark::Kind::Activation ? "activation of stage "
             : m.kind == Mark::Kind::Gradient   ? "gradient of stage "
                                          : "scan tensor of stage ")
         << m.stage;
      if (m.microbatch >= 0)
        os << ", microbatch " << m.microbatch;
      os << ": worker " << m.from << " to " << m.to << ", " << m.bytes
         << " bytes</title></line>\n";
    }
  }

  void axis() {
    double y = kTop + d.workers * kRow + 2;
    os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
                       "stroke=\"#000\"/>\n",
                       kLeft, y, kLeft + kPlot, y);
    int64_t step = niceStep(d.makespan, 10);
    for (int64_t t = 0; t <= d.makespan; t += step) {
      std::string label = d.tickNs ? milliseconds(t) : std::to_string(t);
      os << llvm::format("<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" "
                         "y2=\"%.2f\" stroke=\"#000\"/><text x=\"%.2f\" "
                         "y=\"%.2f\" text-anchor=\"middle\">",
                         x(t), y, x(t), y + 4, x(t), y + 15)
         << label << "</text>\n";
    }
    os << llvm::format("<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">",
                       kLeft + kPlot, y + 28)
       << (d.tickNs ? "time (ms)" : "time (ticks)") << "</text>\n";
  }

  void legend() {
    double y = kTop + d.workers * kRow + 50;
    double at = kLeft;
    auto swatch = [&](const Job &sample, llvm::StringRef text) {
      os << llvm::format("<rect x=\"%.2f\" y=\"%.2f\" width=\"12\" "
                         "height=\"12\" stroke=\"#333\" stroke-width=\"0.5\" ",
                         at, y)
         << "fill=\"" << fillOf(sample) << "\"/>"
         << llvm::format("<text x=\"%.2f\" y=\"%.2f\">", at + 16, y + 10)
         << escaped(text) << "</text>\n";
      at += 22 + text.size() * kCharWidth;
    };
    Job sample;
    for (char kind : {'F', 'B', 'I', 'W'}) {
      if (llvm::none_of(d.jobs, [&](const Job &j) { return j.kind == kind; }))
        continue;
      sample.kind = kind;
      swatch(sample, std::string(1, kind) + " " + kindName(kind));
    }
    os << llvm::format("<line class=\"transfer\" x1=\"%.2f\" y1=\"%.2f\" "
                       "x2=\"%.2f\" y2=\"%.2f\"/><text x=\"%.2f\" "
                       "y=\"%.2f\">transfer</text>\n",
                       at, y + 12, at + 12, y, at + 16, y + 10);
    at += 22 + 8 * kCharWidth;
    os << llvm::format("<line class=\"fetch\" x1=\"%.2f\" y1=\"%.2f\" "
                       "x2=\"%.2f\" y2=\"%.2f\"/><text x=\"%.2f\" "
                       "y=\"%.2f\">weight fetch</text>\n",
                       at, y + 12, at + 12, y, at + 16, y + 10);
    // Colour is the microbatch: the first few hues.
    y += 20;
    at = kLeft;
    os << llvm::format("<text x=\"%.2f\" y=\"%.2f\">microbatch:</text>\n", at,
                       y + 10);
    at += 12 * kCharWidth;
    sample.kind = 'F';
    for (int64_t b = 0; b < std::min<int64_t>(d.microbatches, 16); ++b) {
      sample.microbatch = b;
      swatch(sample, std::to_string(b));
    }
    if (d.microbatches > 16)
      os << llvm::format("<text x=\"%.2f\" y=\"%.2f\">...</text>\n", at, y + 10);
  }

  const Diagram &d;
  llvm::raw_ostream &os;
  double scale;
};
} // namespace

void pipesched::diagram::renderSVG(const Diagram &d, llvm::raw_ostream &os,
                                   bool standalone) {
  if (standalone)
    os << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  Painter(d, os).paint(standalone);
}
