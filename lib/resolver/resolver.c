/* stub: being written */
