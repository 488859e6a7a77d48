# Run by ctest (tests/install/CMakeLists.txt): install, configure and build
# the consumer project against the prefix, run it. Any failing step fails.
function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message("${out}")
endfunction()

file(REMOVE_RECURSE ${PREFIX} ${CONSUMER_BUILD})
step(${CMAKE_COMMAND} --install ${TK_BUILD_DIR} --prefix ${PREFIX})
step(${CMAKE_COMMAND} -S ${CONSUMER_SOURCE} -B ${CONSUMER_BUILD} -G ${GENERATOR}
     -DCMAKE_PREFIX_PATH=${PREFIX} -DTK_KERNEL=${KERNEL} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build ${CONSUMER_BUILD})
step(${CONSUMER_BUILD}/consumer)
