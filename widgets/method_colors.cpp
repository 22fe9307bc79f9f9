#include "method_colors.h"

#include <QByteArray>
#include <cstdint>
#include <utility>

namespace liftlab {

namespace {

// The tab10 palette in its usual order: distinct hues, readable on white.
const std::pair<const char*, QRgb> kPalette[] = {
    {"sgd", 0x1f77b4},
    {"adam", 0xff7f0e},
    {"cf-ridge", 0x2ca02c},
    {"cf-prox", 0xd62728},
    {"ce", 0x9467bd},
    {"cf-full", 0x8c564b},
    {"cf-rls", 0xe377c2},
    {"pgd", 0x7f7f7f},
    {"softplus", 0xbcbd22},
    {"lifter", 0x17becf},
    // The lifter ablations are compared with each other (icnn-ablation): distinct hues, reused
    // from the closed-form family, which never shares a plot with them.
    {"lifter-noslack", 0x9467bd},
    {"lifter-nobody", 0x8c564b},
    {"lifter-decoupled", 0xe377c2},
    {"softplus-wide", 0x6b6b10},
    {"softplus-const", 0xdbdb8d},
};

// FNV-1a: a fixed hash, so the fallback colour does not change between runs.
std::uint32_t stableHash(const QString& s) {
    std::uint32_t h = 2166136261u;
    for (const char c : s.toUtf8()) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

bool paletteColor(const QString& name, QColor* out) {
    for (const auto& [key, rgb] : kPalette) {
        if (name == QLatin1String(key)) {
            *out = QColor(rgb);
            return true;
        }
    }
    // Variants such as "lifter-icnn" or "cf-prox-2" keep the family colour.
    for (const auto& [key, rgb] : kPalette) {
        if (name.startsWith(QLatin1String(key) + QLatin1Char('-'))) {
            *out = QColor(rgb);
            return true;
        }
    }
    return false;
}

}  // namespace

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
        const int shade = static_cast<int>(stableHash(label.mid(at + 1)) % 5u);
        color = shade < 2 ? color.darker(100 + 25 * (shade + 1))
                          : color.lighter(100 + 20 * (shade - 1));
    }
    return color;
}

}  // namespace liftlab
