// A stable colour per method label, so a method looks the same in every panel and every figure.
#pragma once
#include <QColor>
#include <QPair>
#include <QString>
#include <QVector>

namespace liftlab {

// The fixed colours of known methods, in priority order (a label "name-…" takes the colour of the
// first entry whose name prefixes it). The front ends install the engine registry's colours
// (app/feed/method_palette.h) at start-up; the widgets know no method names themselves.
void setMethodPalette(const QVector<QPair<QString, QRgb>>& palette);

// Known methods get a fixed, colour-blind-friendly palette entry; a variant label ("lifter-fanin")
// and a label with a sweep suffix ("cf-prox@batch_size=8") get a shade of their method's colour;
// anything else a colour derived from a hash of the label (the same in every process, unlike qHash
// with a random seed).
QColor methodColor(const QString& label);

}  // namespace liftlab
