-- dpsynth 0.13.0 -> 0.14.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.14.0'" to load this file. \quit
