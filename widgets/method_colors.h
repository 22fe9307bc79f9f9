// A stable colour per method label, so a method looks the same in every panel and every figure.
#pragma once
#include <QColor>
#include <QPair>
#include <QString>
#include <QVector>
#include <array>

namespace liftlab {

// The fixed colours of known methods, in priority order (a label "name-…" takes the colour of the
// first entry whose name prefixes it). The front ends install the engine registry's colours
// (app/feed/method_palette.h) at start-up; the widgets know no method names themselves.
void setMethodPalette(const QVector<QPair<QString, QRgb>>& palette);

// Known methods get a fixed, colour-blind-friendly palette entry; a variant label ("lifter-fanin")
// and a label with a sweep suffix ("cf-prox@batch_size=8") get a shade of their method's colour;
// anything else a colour derived from a hash of the label (the same in every process, unlike qHash
// with a random seed). A label carrying a run tag of a comparison, "adam (A)" (a space and one
// capital letter in parentheses, see runTag), has its method's colour: runs differ by line style.
QColor methodColor(const QString& label);

// The run tag of a compared run: " (A)", " (B)", … for index 0, 1, …
QString runTag(int index);
// The label without its run tag ("adam (B)" → "adam"), and the tag's index (−1 without one).
QString withoutRunTag(const QString& label, int* index = nullptr);

// CIEDE2000 colour difference ΔE₀₀ of two sRGB colours (D65 white, Sharma, Wu & Dalal 2005): about
// 1 is a just-noticeable difference; two methods' colours should differ by well over 10.
double colourDifference(const QColor& a, const QColor& b);
// The same for two CIE L*a*b* colours (L, a, b).
double ciede2000(const std::array<double, 3>& lab1, const std::array<double, 3>& lab2);

}  // namespace liftlab
