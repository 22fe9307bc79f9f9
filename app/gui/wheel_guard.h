// Spin boxes and combo boxes in the scrolled experiment form take the mouse wheel only once they
// have the focus (clicked or tabbed into): scrolling the form over them scrolls the form and
// never changes a value on the way (Steps 1 500 → 1 495).
#pragma once
#include <QObject>

class QWidget;

namespace liftlab {

class WheelGuard : public QObject {
    Q_OBJECT
public:
    using QObject::QObject;

    // Guards every spin box and combo box under `root` (present now) and gives it a strong
    // focus policy, so that a click focuses it before the wheel turns it.
    static void guard(QWidget* root);

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;
};

}  // namespace liftlab
