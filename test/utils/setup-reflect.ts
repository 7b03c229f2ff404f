// Decorator metadata is recorded only if reflect-metadata is loaded before any decorated class.
import 'reflect-metadata';
