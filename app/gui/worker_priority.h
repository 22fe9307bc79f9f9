// Background threads of the window yield the CPU to the GUI thread. On a 2-core machine a run's
// workers (and their OpenMP/OpenBLAS helpers) keep every core busy; at equal priority the GUI
// thread then waits for a time slice and the window stalls however little work a redraw is.
#pragma once

namespace liftlab {

// Lowers the calling thread's scheduling priority (Linux: nice +kWorkerNice for this thread
// only; threads it starts afterwards inherit it). No effect elsewhere.
void lowerCurrentThreadPriority();

}  // namespace liftlab
