-- dpsynth 0.19.0 -> 0.20.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.20.0'" to load this file. \quit
