// Hands the engine registry's method colours to the widgets (which know no method names).
#pragma once

namespace liftlab {

// Installs every registered method's colour (methods/method_registry.h) as the widgets' palette
// (method_colors.h). Call once at start-up, before any panel draws.
void installMethodPalette();

}  // namespace liftlab
