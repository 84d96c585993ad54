# What `cmake --install build --prefix P` puts in P, so that another MLIR
# compiler embeds the dialect and the passes:
#   find_package(pipesched CONFIG)  ->  pipesched::SchedDialect,
#   pipesched::SchedTransforms, pipesched::SchedTarget, pipesched::Scheduling
# plus the public and generated headers and the tools (see
# examples/embed/ for a consumer; the runtime installs itself).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(PIPESCHED_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/pipesched)
set(_pipesched_libraries PipeschedScheduling PipeschedSched
    PipeschedTransforms PipeschedTarget)
set_target_properties(PipeschedScheduling PROPERTIES EXPORT_NAME Scheduling)
set_target_properties(PipeschedSched PROPERTIES EXPORT_NAME SchedDialect)
set_target_properties(PipeschedTransforms PROPERTIES EXPORT_NAME SchedTransforms)
set_target_properties(PipeschedTarget PROPERTIES EXPORT_NAME SchedTarget)
foreach(lib ${_pipesched_libraries})
  target_include_directories(${lib} INTERFACE
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
endforeach()

install(TARGETS ${_pipesched_libraries} EXPORT pipeschedTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS pipeline-opt pipeline-translate pipeline-compile pipeline-report
  RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

# Public headers (sources) and the ones tablegen and configure generate.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/pipesched
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/pipesched
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
  FILES_MATCHING PATTERN "*.h" PATTERN "*.inc"
  PATTERN "CMakeFiles" EXCLUDE)
# The dialect's ODS, for projects that build on it with tablegen.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/dialects/Sched
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/pipesched/ods
  FILES_MATCHING PATTERN "*.td")

install(EXPORT pipeschedTargets NAMESPACE pipesched::
  DESTINATION ${PIPESCHED_CMAKE_DIR})
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/pipeschedConfig.cmake.in
  ${PROJECT_BINARY_DIR}/pipeschedConfig.cmake
  INSTALL_DESTINATION ${PIPESCHED_CMAKE_DIR})
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/pipeschedConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/pipeschedConfig.cmake
  ${PROJECT_BINARY_DIR}/pipeschedConfigVersion.cmake
  DESTINATION ${PIPESCHED_CMAKE_DIR})
