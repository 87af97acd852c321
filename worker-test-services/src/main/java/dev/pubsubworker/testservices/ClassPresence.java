package dev.pubsubworker.testservices;

/** Whether an optional library is on the class path, checked without initialising its classes. */
final class ClassPresence {

  private ClassPresence() {}

  static boolean isPresent(String className) {
    try {
      Class.forName(className, false, ClassPresence.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
