//! Blocking reference drivers (feature `std`): a Core over a child process, an Extension over stdio.
