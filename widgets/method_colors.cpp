#include "method_colors.h"

#include <QByteArray>
#include <array>
#include <cmath>
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

// sRGB (0–255) → CIE L*a*b* under D65.
std::array<double, 3> srgbToLab(const QColor& c) {
    const auto linear = [](double v) {
        v /= 255.0;
        return v <= 0.04045 ? v / 12.92 : std::pow((v + 0.055) / 1.055, 2.4);
    };
    const double r = linear(c.red()), g = linear(c.green()), b = linear(c.blue());
    const double x = (0.4124564 * r + 0.3575761 * g + 0.1804375 * b) / 0.95047;
    const double y = 0.2126729 * r + 0.7151522 * g + 0.0721750 * b;
    const double z = (0.0193339 * r + 0.1191920 * g + 0.9503041 * b) / 1.08883;
    const auto f = [](double t) {
        return t > 216.0 / 24389.0 ? std::cbrt(t) : (24389.0 / 27.0 * t + 16.0) / 116.0;
    };
    return {116.0 * f(y) - 16.0, 500.0 * (f(x) - f(y)), 200.0 * (f(y) - f(z))};
}

}  // namespace

void setMethodPalette(const QVector<QPair<QString, QRgb>>& entries) {
    palette() = entries;
}

QString runTag(int index) {
    return QStringLiteral(" (%1)").arg(QChar(QLatin1Char('A').unicode() + index));
}

QString withoutRunTag(const QString& label, int* index) {
    const int n = label.size();
    const bool tagged = n >= 5 && label.at(n - 1) == QLatin1Char(')') &&
                        label.at(n - 2) >= QLatin1Char('A') &&
                        label.at(n - 2) <= QLatin1Char('Z') &&
                        label.at(n - 3) == QLatin1Char('(') && label.at(n - 4) == QLatin1Char(' ');
    if (index) *index = tagged ? label.at(n - 2).unicode() - 'A' : -1;
    return tagged ? label.left(n - 4) : label;
}

// Sharma, Wu & Dalal (2005), "The CIEDE2000 color-difference formula", eq. (1)–(17), with
// kL = kC = kH = 1.
double ciede2000(const std::array<double, 3>& lab1, const std::array<double, 3>& lab2) {
    constexpr double kPi = 3.14159265358979323846;
    const auto deg = [](double rad) { return rad * 180.0 / kPi; };
    const auto rad = [](double deg) { return deg * kPi / 180.0; };
    const auto [L1, a1, b1] = lab1;
    const auto [L2, a2, b2] = lab2;
    const double Cbar = (std::hypot(a1, b1) + std::hypot(a2, b2)) / 2.0;
    const double c7 = std::pow(Cbar, 7);
    const double G = 0.5 * (1.0 - std::sqrt(c7 / (c7 + std::pow(25.0, 7))));
    const double a1p = (1.0 + G) * a1, a2p = (1.0 + G) * a2;
    const double C1p = std::hypot(a1p, b1), C2p = std::hypot(a2p, b2);
    const auto hue = [&](double b, double ap) {
        if (b == 0 && ap == 0) return 0.0;
        const double h = deg(std::atan2(b, ap));
        return h < 0 ? h + 360.0 : h;
    };
    const double h1p = hue(b1, a1p), h2p = hue(b2, a2p);
    const double dLp = L2 - L1, dCp = C2p - C1p;
    double dhp = 0;
    if (C1p * C2p != 0) {
        dhp = h2p - h1p;
        if (dhp > 180) dhp -= 360;
        if (dhp < -180) dhp += 360;
    }
    const double dHp = 2.0 * std::sqrt(C1p * C2p) * std::sin(rad(dhp / 2.0));
    const double Lbarp = (L1 + L2) / 2.0, Cbarp = (C1p + C2p) / 2.0;
    double hbarp = h1p + h2p;
    if (C1p * C2p != 0) {
        if (std::abs(h1p - h2p) <= 180)
            hbarp /= 2.0;
        else
            hbarp = h1p + h2p < 360 ? (hbarp + 360) / 2.0 : (hbarp - 360) / 2.0;
    }
    const double T = 1 - 0.17 * std::cos(rad(hbarp - 30)) + 0.24 * std::cos(rad(2 * hbarp)) +
                     0.32 * std::cos(rad(3 * hbarp + 6)) - 0.20 * std::cos(rad(4 * hbarp - 63));
    const double dTheta = 30 * std::exp(-std::pow((hbarp - 275) / 25, 2));
    const double cb7 = std::pow(Cbarp, 7);
    const double Rc = 2 * std::sqrt(cb7 / (cb7 + std::pow(25.0, 7)));
    const double Sl = 1 + 0.015 * std::pow(Lbarp - 50, 2) / std::sqrt(20 + std::pow(Lbarp - 50, 2));
    const double Sc = 1 + 0.045 * Cbarp, Sh = 1 + 0.015 * Cbarp * T;
    const double Rt = -std::sin(rad(2 * dTheta)) * Rc;
    const double l = dLp / Sl, c = dCp / Sc, h = dHp / Sh;
    return std::sqrt(l * l + c * c + h * h + Rt * c * h);
}

double colourDifference(const QColor& a, const QColor& b) {
    return ciede2000(srgbToLab(a.toRgb()), srgbToLab(b.toRgb()));
}

QColor methodColor(const QString& tagged) {
    const QString label = withoutRunTag(tagged);
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
