// Example figures for eyeballing: with LIFTLAB_WIDGET_EXAMPLES=<dir> set, tests also write their
// example panel there (nothing is written otherwise).
#pragma once
#include <QDir>
#include <QString>

namespace liftlab::test {

template <typename Panel>
void saveExample(Panel& panel, const QString& name, int width, int height) {
    const QString dir = qEnvironmentVariable("LIFTLAB_WIDGET_EXAMPLES");
    if (dir.isEmpty()) return;
    QDir().mkpath(dir);
    panel.exportTo(QDir(dir).filePath(name), width, height);
}

}  // namespace liftlab::test
