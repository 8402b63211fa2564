from toolkit.entry import main

main()
