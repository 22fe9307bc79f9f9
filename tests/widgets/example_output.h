// Shared by the widget tests: non-finite test values, and example figures for eyeballing (with
// LIFTLAB_WIDGET_EXAMPLES=<dir> set, tests also write their example panel there; nothing
// otherwise).
#pragma once
#include <QDir>
#include <QString>

#include <limits>

namespace liftlab::test {

// Non-finite inputs the panels must draw around.
inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

template <typename Panel>
void saveExample(Panel& panel, const QString& name, int width, int height) {
    const QString dir = qEnvironmentVariable("LIFTLAB_WIDGET_EXAMPLES");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    panel.exportTo(QDir(dir).filePath(name), width, height);
}

}  // namespace liftlab::test
