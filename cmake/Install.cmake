# Installing LiftLab like a desktop application, and its Debian package.
#
#   cmake --install build/release --strip [--prefix DIR]   (default prefix /usr/local)
#   cd build/release && cpack                          (liftlab_<version>_<arch>.deb, prefix /usr)
#
# Layout under the prefix:
#   bin/liftlab, bin/liftlab-cli
#   share/liftlab/presets/*.json, share/liftlab/models/*.pt   (the programs find this folder from
#                                                              their own: engine/spec/presets.h)
#   share/doc/liftlab/                 docs/ (the window's Help › User guide reads user-guide.md)
#   share/applications/io.github.liftlab.LiftLab.desktop
#   share/icons/hicolor/scalable/apps/io.github.liftlab.LiftLab.svg
#   share/metainfo/io.github.liftlab.LiftLab.metainfo.xml
# The tests package_install and package_deb (tests/packaging/) check all of it.

set(LIFTLAB_APP_ID io.github.liftlab.LiftLab)
# The date of this version's entry in the AppStream metainfo (<release>); change it with the
# version in project().
set(LIFTLAB_RELEASE_DATE 2026-12-05)

install(TARGETS liftlab liftlab-cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# The presets are also compiled into the programs; the installed copies are for reading and for
# copying as the start of a spec of one's own. The models are what the presets name.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/resources/presets ${PROJECT_SOURCE_DIR}/resources/models
        DESTINATION ${LIFTLAB_INSTALL_RESOURCE_DIR})
# app/gui/user_guide.cpp looks for <bin>/../share/doc/liftlab/user-guide.md.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DATADIR}/doc/liftlab)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/${LIFTLAB_APP_ID}.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/${LIFTLAB_APP_ID}.svg
        DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
configure_file(${PROJECT_SOURCE_DIR}/packaging/${LIFTLAB_APP_ID}.metainfo.xml.in
               ${CMAKE_CURRENT_BINARY_DIR}/${LIFTLAB_APP_ID}.metainfo.xml @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/${LIFTLAB_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)

# The Debian package. Its Depends come from dpkg-shlibdeps over the two programs (Qt 6, LibTorch,
# QCustomPlot, OpenSSL, …), plus OpenBLAS: LibTorch links libblas.so.3, which without
# libopenblas0-pthread resolves to the slow reference BLAS (scripts/install-deps.sh).
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME liftlab)
set(CPACK_PACKAGE_VENDOR "The LiftLab developers")
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "desktop lab comparing training methods for neural networks, live")
set(CPACK_PACKAGE_DESCRIPTION
    "LiftLab compares training methods side by side while they train: closed-form last layers \
(per-batch ridge and a proximal update) against SGD and Adam, and the lifter for input-convex \
networks against projected gradient and softplus, on regression, Fashion-MNIST, energy models \
and convex potential flows. The window (liftlab) shows loss curves, feature spectra, loss \
landscapes, escape dynamics, ablations, sweeps and costs; liftlab-cli runs the same presets \
headless and writes the same run folders.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)  # the RelWithDebInfo programs carry ≈ 10× their size in debug info
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # liftlab_<version>_<arch>.deb
set(LIFTLAB_PACKAGE_MAINTAINER
    "LiftLab maintainers <maintainers@users.noreply.a-seed-11af0d99.example>"
    CACHE STRING "The Maintainer field of the Debian package")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "${LIFTLAB_PACKAGE_MAINTAINER}")
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libopenblas0-pthread")
# The Fashion-MNIST presets read /usr/share/datasets/fashion-mnist; TorchScript models of one's
# own are written with PyTorch (docs/your-model.md).
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "dataset-fashion-mnist")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "python3-torch")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
