package dev.soko.driver;

/** Entry point of the Soko CSI driver. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.out.println("soko-driver");
  }
}
