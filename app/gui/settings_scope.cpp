#include "settings_scope.h"

#include <QSettings>

namespace liftlab {

void useSettingsFolder(const QString& dir) {
    for (const auto format : {QSettings::NativeFormat, QSettings::IniFormat})
        for (const auto scope : {QSettings::UserScope, QSettings::SystemScope})
            QSettings::setPath(format, scope, dir);
}

}  // namespace liftlab
