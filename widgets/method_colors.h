// A stable colour per method label, so a method looks the same in every panel and every figure.
#pragma once
#include <QColor>
#include <QString>

namespace liftlab {

// Known methods get a fixed, colour-blind-friendly palette entry; a label with a sweep suffix
// ("cf-prox@batch_size=8") gets a shade of its method's colour; anything else a colour derived
// from a hash of the label (the same in every process, unlike qHash with a random seed).
QColor methodColor(const QString& label);

}  // namespace liftlab
