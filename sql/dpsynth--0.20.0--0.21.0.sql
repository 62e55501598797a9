-- dpsynth 0.20.0 -> 0.21.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.21.0'" to load this file. \quit
