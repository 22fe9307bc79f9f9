#include "method_palette.h"

#include "method_colors.h"
#include "methods/method_registry.h"

namespace liftlab {

void installMethodPalette() {
    QVector<QPair<QString, QRgb>> palette;
    for (const auto& m : method_registry())
        if (m.colour != 0) palette.push_back({QString::fromStdString(m.name), m.colour});
    setMethodPalette(palette);
}

}  // namespace liftlab
