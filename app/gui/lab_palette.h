// The window palette of the lab's dark mode (Fusion style). Plots keep their light background:
// figures look the same on screen and on paper.
#pragma once
#include <QPalette>

namespace liftlab {

QPalette darkLabPalette();
// The Fusion style with the dark palette, or with the style's standard one.
void applyLabPalette(bool dark);

}  // namespace liftlab
