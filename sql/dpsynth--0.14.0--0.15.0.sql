-- dpsynth 0.14.0 -> 0.15.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.15.0'" to load this file. \quit
