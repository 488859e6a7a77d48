# Install rules for the C++ package (included from the top-level
# CMakeLists.txt): libtk and tkc as the exported targets tk::tk and tk::tkc,
# the headers of include/tk/ plus the generated tk/Version.h, tkConfig.cmake
# (with tk_add_kernels from TkAddKernels.cmake) and a version file.
#
#   cmake --install build --prefix /opt/tk
#   # a user's CMakeLists.txt:
#   find_package(tk REQUIRED)            # -DCMAKE_PREFIX_PATH=/opt/tk
#   target_link_libraries(app PRIVATE tk::tk)
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(TK_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/tk)
# Installed tkc finds the installed libtk beside it.
set_target_properties(tkc PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
target_include_directories(tk INTERFACE "$<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>")

install(TARGETS tk tkc EXPORT tkTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/tk DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_BINARY_DIR}/tk/Version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/tk)
install(EXPORT tkTargets NAMESPACE tk:: DESTINATION ${TK_INSTALL_CMAKEDIR})

configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tkConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tkConfig.cmake
                              INSTALL_DESTINATION ${TK_INSTALL_CMAKEDIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tkConfig.cmake ${PROJECT_BINARY_DIR}/tkConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/TkAddKernels.cmake
        DESTINATION ${TK_INSTALL_CMAKEDIR})
