"""Run serving engines under the official MLPerf LoadGen and lay out a submission tree."""
