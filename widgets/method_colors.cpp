#include "method_colors.h"

#include <QByteArray>
#include <cstdint>
#include <utility>

namespace liftlab {

namespace {

QVector<QPair<QString, QRgb>>& palette() {
    static QVector<QPair<QString, QRgb>> entries;
    return entries;
}

// FNV-1a: a fixed hash, so the fallback colour does not change between runs.
std::uint32_t stableHash(const QString& s) {
    std::uint32_t h = 2166136261u;
    for (const char c : s.toUtf8()) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

// One of five stable shades of `color` for `tag` (a sweep value or a variant's suffix); never the
// colour itself, so a member always differs from its family's plain curve.
QColor shadeOf(const QColor& color, const QString& tag) {
    const int shade = static_cast<int>(stableHash(tag) % 5u);
    return shade < 2 ? color.darker(100 + 25 * (shade + 1)) : color.lighter(100 + 20 * (shade - 1));
}

bool paletteColor(const QString& name, QColor* out) {
    for (const auto& [key, rgb] : std::as_const(palette())) {
        if (name == key) {
            *out = QColor(rgb);
            return true;
        }
    }
    // Variants such as "lifter-fanin" or "cf-prox-2" take a shade of the family colour: alike, but
    // told apart when they share a plot with the family's own method.
    for (const auto& [key, rgb] : std::as_const(palette())) {
        if (name.startsWith(key + QLatin1Char('-'))) {
            *out = shadeOf(QColor(rgb), name.mid(key.size() + 1));
            return true;
        }
    }
    return false;
}

}  // namespace

void setMethodPalette(const QVector<QPair<QString, QRgb>>& entries) {
    palette() = entries;
}

QColor methodColor(const QString& label) {
    const int at = label.indexOf(QLatin1Char('@'));
    const QString base = at < 0 ? label : label.left(at);
    QColor color;
    if (!paletteColor(base, &color)) {
        // Golden-ratio hue steps spread hashed labels; mid saturation/value reads on white.
        const std::uint32_t h = stableHash(base);
        const int hue = static_cast<int>((h % 1000u) * 0.618034 * 360.0) % 360;
        color = QColor::fromHsv(hue, 200, 190);
    }
    if (at >= 0) {
        // Members of a sweep: same family, lighter or darker by a stable amount.
        color = shadeOf(color, label.mid(at + 1));
    }
    return color;
}

}  // namespace liftlab
