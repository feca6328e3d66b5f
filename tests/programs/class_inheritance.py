# breakpoints: 4, 16
class Animal:
    def __init__(self, name):
        self.name = name

    def speak(self):
        return self.name + " makes a sound"


class Dog(Animal):
    def __init__(self, name, tricks):
        super().__init__(name)
        self.tricks = tricks

    def speak(self):
        base = super().speak()
        return base + " (woof)"


class Puppy(Dog):
    def speak(self):
        return super().speak().upper()


pets = [Dog("rex", 2), Puppy("bit", 0)]
for p in pets:
    print(p.speak())
