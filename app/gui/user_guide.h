// F1: the user guide (docs/user-guide.md) in a small window of its own, rendered from Markdown,
// its links followed in place. Found beside the program (an install's share/doc/liftlab/, or the
// docs/ of the source tree a build lives in) or where $LIFTLAB_USER_GUIDE points; when there is
// none the window says where it looked and what to read instead.
#pragma once
#include <QString>
#include <QStringList>

class QWidget;

namespace liftlab {

// The guide's path, "" when none is found; `searched` receives the places looked at.
QString userGuidePath(QStringList* searched = nullptr);

// Shows the guide (or why it is missing) in the window "userGuide", raised if already open.
void showUserGuide(QWidget* parent);

}  // namespace liftlab
