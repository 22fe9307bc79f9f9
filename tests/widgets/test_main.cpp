// One QApplication for every widget test, on the offscreen platform (no display needed).
#include <gtest/gtest.h>
#include <QApplication>
#include <QStandardPaths>

#include "method_colors.h"

int main(int argc, char** argv) {
    qputenv("QT_QPA_PLATFORM", "offscreen");
    QStandardPaths::setTestModeEnabled(true);
    QApplication app(argc, argv);
    // The widgets know no method names: the front ends install the engine registry's colours
    // (app/feed/method_palette.cpp). These tests link no engine, so they install the same table.
    liftlab::setMethodPalette({{"sgd", 0x1f77b4},
                               {"adam", 0xff7f0e},
                               {"ce", 0x9467bd},
                               {"cf-ridge", 0x2ca02c},
                               {"cf-prox", 0xd62728},
                               {"cf-full", 0x8c564b},
                               {"cf-rls", 0xe377c2},
                               {"pgd", 0x7f7f7f},
                               {"softplus", 0xbcbd22},
                               {"softplus-const", 0xdbdb8d},
                               {"softplus-wide", 0x6b6b10},
                               {"lifter", 0x17becf},
                               {"lifter-noslack", 0x9467bd},
                               {"lifter-nobody", 0x8c564b},
                               {"lifter-decoupled", 0xe377c2}});
    ::testing::InitGoogleTest(&argc, argv);
    return RUN_ALL_TESTS();
}
